#pragma once
// ELF notes (elf(5), "Notes (Nhdr)"): a section of SHT_NOTE entries, each a 12-byte header
// (name size, descriptor size, type), the owner's name and the descriptor, both padded to 4.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::elf {

// The descriptor of the first note owned by owner in the named section, without trailing NULs;
// nullopt when the file has no such section or note; an error when the section does not fit
// the file or its notes are malformed.
util::Result<std::optional<std::string>> read_note(const ElfFile& elf, const unsigned char* data, std::size_t size,
                                                   std::string_view section, std::string_view owner);

}  // namespace cudoctor::elf
