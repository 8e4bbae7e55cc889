// libFuzzer target: /etc/ld.so.cache in any of its formats.
#include <cstddef>
#include <cstdint>

#include "cudoctor/ld/ld_so_cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)cudoctor::ld::parse_ld_so_cache(data, size);
  return 0;
}
