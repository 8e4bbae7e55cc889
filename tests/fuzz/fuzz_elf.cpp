// libFuzzer target: the ELF reader and the fatbin reader behind it must reject or accept any
// bytes without reading out of bounds, looping or crashing.
#include <cstddef>
#include <cstdint>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/elf/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto elf = cudoctor::elf::parse_elf(data, size);
  if (elf) {
    const auto fb = cudoctor::elf::read_fatbin(*elf, data, size);
    if (fb && *fb) (void)cudoctor::elf::can_run(**fb, cudoctor::util::Version{{9, 0}, ""});
  }
  return 0;
}
