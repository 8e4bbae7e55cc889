// libFuzzer target: the ELF reader and the fatbin reader behind it must reject or accept any
// bytes without reading out of bounds, looping or crashing, from memory and through reads
// at offsets (ldd's path: blocks smaller than every structure, so every range crosses one).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/elf/fatbin.hpp"
#include "cudoctor/elf/source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto elf = cudoctor::elf::parse_elf(data, size);
  if (elf) {
    const auto fb = cudoctor::elf::read_fatbin(*elf, data, size);
    if (fb && *fb) (void)cudoctor::elf::can_run(**fb, cudoctor::util::Version{{9, 0}, ""});
  }
  for (const auto headers : {cudoctor::elf::Headers::loader, cudoctor::elf::Headers::all}) {
    cudoctor::elf::ReadSource source(
        size,
        [&](std::uint64_t off, unsigned char* buf, std::size_t n) -> cudoctor::util::Result<std::size_t> {
          const std::size_t k = off >= size ? 0 : std::min<std::size_t>(n, size - static_cast<std::size_t>(off));
          std::copy_n(data + off, k, buf);
          return k;
        },
        7);
    (void)cudoctor::elf::parse_elf(source, headers);
  }
  return 0;
}
