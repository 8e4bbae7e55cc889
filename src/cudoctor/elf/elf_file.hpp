#pragma once
// An ELF file (32 or 64 bit, either byte order) normalised into one model: the rest of
// cudoctor never sees ELF classes. Parsed from the bytes with every offset checked.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/elf/bytes.hpp"
#include "cudoctor/elf/source.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::elf {

struct Segment {
  std::uint32_t type = 0;  // PT_LOAD 1, PT_DYNAMIC 2, PT_INTERP 3
  std::uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0;
};

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t addr = 0, offset = 0, size = 0;
};

// What one needed file's versions must be (.gnu.version_r).
struct VersionNeed {
  std::string file;                   // "libstdc++.so.6"
  std::vector<std::string> versions;  // "GLIBCXX_3.4.32"
};

struct ElfFile {
  bool is_64 = true;
  bool big_endian = false;
  std::uint16_t type = 0;     // ET_EXEC 2, ET_DYN 3
  std::uint16_t machine = 0;  // EM_X86_64 62, EM_AARCH64 183
  std::vector<Segment> segments;
  std::vector<Section> sections;  // empty when the file has no section headers
  std::string interpreter;        // PT_INTERP
  bool has_dynamic = false;
  std::string soname;
  std::vector<std::string> needed;     // DT_NEEDED in order
  std::optional<std::string> rpath;    // DT_RPATH
  std::optional<std::string> runpath;  // DT_RUNPATH
  std::uint64_t flags_1 = 0;           // DT_FLAGS_1 (DF_1_NODEFLIB 0x800)
  std::vector<VersionNeed> version_needs;
  std::vector<std::string> version_defs;  // defined versions, without the base (file) entry

  bool nodeflib() const { return flags_1 & 0x800; }
  const Section* section(std::string_view name) const;
};

// What parse_elf reads: everything, or what ld.so reads (the program headers and the dynamic
// segment; the section header table, at the file's end, neither read nor checked).
enum class Headers { all, loader };

// Parses the bytes of an ELF file. Errors are user-grade: "truncated program header table",
// "not an ELF file (magic 7f 45 4c 47)".
util::Result<ElfFile> parse_elf(const unsigned char* data, std::size_t size, Headers headers = Headers::all);
// The same, read at offsets through read (see source.hpp): a few reads of a large file.
util::Result<ElfFile> parse_elf(std::uint64_t size, const ReadAt& read, Headers headers = Headers::all);
// The same from any source; an error of the source's reads is the error.
util::Result<ElfFile> parse_elf(Source& source, Headers headers = Headers::all);

std::string machine_name(std::uint16_t machine);

}  // namespace cudoctor::elf
