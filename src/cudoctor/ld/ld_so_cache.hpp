#pragma once
// /etc/ld.so.cache, parsed as glibc's elf/dl-cache.c reads it: the old "ld.so-1.7.0" format,
// the new "glibc-ld.so.cache1.1" format, or both in one file; with the extension section
// that names glibc-hwcaps subdirectories.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cudoctor/util/result.hpp"

namespace cudoctor::ld {

struct CacheEntry {
  std::string name;        // the key: "libc.so.6"
  std::string path;        // "/lib/x86_64-linux-gnu/libc.so.6"
  std::int32_t flags = 0;  // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 = 0x0303, …
  std::uint64_t hwcap = 0;
  std::string hwcaps_subdir;  // "x86-64-v3" for a glibc-hwcaps entry, else ""
};

struct LdSoCache {
  std::string format;               // "new", "old", "old+new"
  std::vector<CacheEntry> entries;  // in file order (sorted by glibc)
};

util::Result<LdSoCache> parse_ld_so_cache(const unsigned char* data, std::size_t size);

// The entry ld.so takes for name (glibc's search_cache, elf/dl-cache.c): a libc6 entry of
// the program's class and machine; of those, the glibc-hwcaps entry whose subdirectory comes
// first in hwcaps_subdirs ("glibc-hwcaps/x86-64-v3", best first, supported only) before a
// plain one. Entries for an unsupported level and legacy hwcap entries are skipped. nullptr
// when no entry fits.
const CacheEntry* best_entry(const LdSoCache& cache, std::string_view name, bool is_64, std::uint16_t machine,
                             const std::vector<std::string>& hwcaps_subdirs);

// The same answers for a run's many lookups: a cache's entries grouped by name once (glibc
// binary-searches its sorted file; a linear scan per lookup was a fifth of an ldd of libtorch).
// It points into the cache it was built from, which must outlive it unchanged.
class CacheIndex {
 public:
  explicit CacheIndex(const LdSoCache& cache);
  const CacheEntry* best_entry(std::string_view name, bool is_64, std::uint16_t machine,
                               const std::vector<std::string>& hwcaps_subdirs) const;

 private:
  // Keys are views of the entries' own names.
  std::unordered_map<std::string_view, std::vector<const CacheEntry*>> m_named;  // in file order
};

// glibc's flag values (sysdeps/generic/ldconfig.h).
inline constexpr std::int32_t k_flag_type_mask = 0x00ff;
inline constexpr std::int32_t k_flag_elf_libc6 = 0x0003;
inline constexpr std::int32_t k_flag_required_mask = 0xff00;
inline constexpr std::int32_t k_flag_x8664_lib64 = 0x0300;
inline constexpr std::int32_t k_flag_aarch64_lib64 = 0x0a00;

}  // namespace cudoctor::ld
