#pragma once
// The CUDA fatbin: the .nv_fatbin section of an ELF file, a sequence of fatbin containers,
// each a list of entries (cubins for SM architectures, PTX for virtual ones). Only entry
// headers are read, so compressed entries are listed without being decompressed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/compat/binary.hpp"
#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::elf {

struct FatbinEntry {
  enum class Kind { cubin, ptx, other };
  Kind kind = Kind::other;
  int arch = 0;        // 90 for sm_90 / compute_90
  std::string suffix;  // "a" arch-specific, "f" family-specific, "" portable
  bool compressed = false;
  std::uint64_t size = 0;  // payload bytes in the file
  std::uint16_t raw_kind = 0;

  std::string name() const;  // "sm_90a", "compute_80"
};

struct Fatbin {
  std::vector<FatbinEntry> entries;
  std::size_t containers = 0;
  // Distinct names, sorted by arch: {"sm_75", "sm_90a"} and {"compute_90"}.
  std::vector<std::string> sm_archs() const;
  std::vector<std::string> ptx_archs() const;
};

// The fatbin of an ELF file; nullopt when it has no .nv_fatbin section. Errors name what is
// malformed ("fatbin entry at 0x1230 runs past the section").
util::Result<std::optional<Fatbin>> read_fatbin(const ElfFile& elf, const unsigned char* data, std::size_t size);

// Parses fatbin containers in raw bytes (a section's contents, or a .fatbin file).
util::Result<Fatbin> parse_fatbin(const unsigned char* data, std::size_t size);

// The fatbin's cubins and PTX as compatibility targets (entries of another kind are left out).
std::vector<compat::Target> targets(const Fatbin& fb);

// Can code with these kernels run on a GPU of compute capability cc? compat::runs_on decides.
compat::Verdict can_run(const Fatbin& fb, const util::Version& cc);

}  // namespace cudoctor::elf
