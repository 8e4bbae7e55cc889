// libFuzzer target: raw fatbin containers.
#include <cstddef>
#include <cstdint>

#include "cudoctor/elf/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto fb = cudoctor::elf::parse_fatbin(data, size);
  if (fb) {
    (void)fb->sm_archs();
    (void)fb->ptx_archs();
  }
  return 0;
}
