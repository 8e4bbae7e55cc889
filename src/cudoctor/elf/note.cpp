#include "cudoctor/elf/note.hpp"

#include "cudoctor/elf/bytes.hpp"

namespace cudoctor::elf {
namespace {

constexpr std::uint32_t k_sht_note = 7;

std::uint64_t align4(std::uint64_t n) {
  return (n + 3) & ~std::uint64_t{3};
}

std::string_view trim_nuls(std::string_view s) {
  while (!s.empty() && s.back() == '\0') s.remove_suffix(1);
  return s;
}

}  // namespace

util::Result<std::optional<std::string>> read_note(const ElfFile& elf, const unsigned char* data, std::size_t size,
                                                   std::string_view section, std::string_view owner) {
  const auto* s = elf.section(section);
  if (!s || s->type != k_sht_note) return std::optional<std::string>();
  const Bytes file(data, size, elf.big_endian);
  const auto notes = file.slice(s->offset, s->size);
  if (!notes) return util::error(std::string(section) + ": section lies outside the file");
  std::uint64_t off = 0;
  while (off + 12 <= notes->size()) {
    const auto namesz = notes->u32(off), descsz = notes->u32(off + 4);
    if (!namesz || !descsz) break;
    const auto name_off = off + 12;
    const auto desc_off = name_off + align4(*namesz);
    if (!notes->contains(name_off, *namesz) || !notes->contains(desc_off, *descsz))
      return util::error(std::string(section) + ": a note runs past the end of its section");
    const std::string_view name(reinterpret_cast<const char*>(notes->data() + name_off), *namesz);
    if (trim_nuls(name) == owner)
      return std::optional<std::string>(
          std::string(trim_nuls({reinterpret_cast<const char*>(notes->data() + desc_off), *descsz})));
    off = desc_off + align4(*descsz);
  }
  return std::optional<std::string>();
}

}  // namespace cudoctor::elf
