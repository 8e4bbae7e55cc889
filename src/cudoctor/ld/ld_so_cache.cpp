#include "cudoctor/ld/ld_so_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cudoctor/elf/bytes.hpp"

namespace cudoctor::ld {
namespace {

constexpr char k_old_magic[] = "ld.so-1.7.0";           // 11 bytes, no NUL in the file
constexpr char k_new_magic[] = "glibc-ld.so.cache1.1";  // magic "glibc-ld.so.cache" + version "1.1"
constexpr std::uint32_t k_extension_magic = 0xeaa42174;
constexpr std::uint32_t k_tag_glibc_hwcaps = 1;
constexpr std::uint64_t k_hwcap_extension = 1ull << 62;  // DL_CACHE_HWCAP_EXTENSION

// New format: header {magic[17], version[3], u32 nlibs, u32 len_strings, u8 flags, u8[3],
// u32 extension_offset, u32[3]} = 48 bytes; entries {i32 flags, u32 key, u32 value,
// u32 osversion, u64 hwcap} = 24 bytes. String offsets count from the header.
util::Result<LdSoCache> parse_new(const elf::Bytes& all, std::size_t start, const std::string& format) {
  const auto b = all.slice(start, all.size() - start);
  if (!b || b->size() < 48) return util::error("truncated ld.so.cache header");
  auto bytes = *b;
  // flags byte: 2 little-endian, 3 big-endian, 0 unknown (assume host order: little here).
  const auto endian = *bytes.u8(28);
  if (endian == 3) bytes.set_big_endian(true);
  if (endian == 1) return util::error("ld.so.cache header says its byte order is invalid");
  const auto nlibs = *bytes.u32(20);
  if (!bytes.contains(48, static_cast<std::uint64_t>(nlibs) * 24))
    return util::error(fmt::format("ld.so.cache claims {} entries, more than the file holds", nlibs));
  LdSoCache cache;
  cache.format = format;
  std::vector<std::string> hwcaps;
  const auto ext = *bytes.u32(32);
  if (ext != 0 && bytes.contains(ext, 8) && *bytes.u32(ext) == k_extension_magic) {
    const auto count = *bytes.u32(ext + 4);
    for (std::uint32_t i = 0; i < count && i < 64; ++i) {
      const auto s = ext + 8 + static_cast<std::uint64_t>(i) * 16;
      if (!bytes.contains(s, 16)) return util::error("truncated ld.so.cache extension section");
      if (*bytes.u32(s) != k_tag_glibc_hwcaps) continue;
      const auto off = *bytes.u32(s + 8);
      const auto size = *bytes.u32(s + 12);
      for (std::uint32_t k = 0; k + 4 <= size; k += 4) {
        const auto str = bytes.u32(static_cast<std::uint64_t>(off) + k);
        const auto name = str ? bytes.cstr(*str) : std::nullopt;
        if (!name) return util::error("ld.so.cache glibc-hwcaps name outside the file");
        hwcaps.emplace_back(*name);
      }
    }
  }
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    const auto e = 48 + static_cast<std::uint64_t>(i) * 24;
    CacheEntry entry;
    entry.flags = static_cast<std::int32_t>(*bytes.u32(e));
    const auto key = bytes.cstr(*bytes.u32(e + 4));
    const auto value = bytes.cstr(*bytes.u32(e + 8));
    if (!key || !value) return util::error(fmt::format("ld.so.cache entry {} points outside the file", i));
    entry.name = *key;
    entry.path = *value;
    entry.hwcap = *bytes.u64(e + 16);
    if (entry.hwcap & k_hwcap_extension) {
      const auto index = entry.hwcap & 0xffffffffu;
      if (index >= hwcaps.size())
        return util::error(
            fmt::format("ld.so.cache entry {} names glibc-hwcaps index {} of {}", i, index, hwcaps.size()));
      entry.hwcaps_subdir = hwcaps[index];
    }
    cache.entries.push_back(std::move(entry));
  }
  return cache;
}

}  // namespace

util::Result<LdSoCache> parse_ld_so_cache(const unsigned char* data, std::size_t size) {
  const elf::Bytes b(data, size);
  if (size >= 20 && std::memcmp(data, k_new_magic, 20) == 0) return parse_new(b, 0, "new");
  if (size >= 16 && std::memcmp(data, k_old_magic, 11) == 0) {
    // Old format: {magic[11], u32 nlibs} then entries {i32 flags, u32 key, u32 value}; the new
    // format follows, 8-byte aligned (glibc: ALIGN_CACHE).
    const auto nlibs = *b.u32(12);  // the 11-byte magic is padded to 12
    const std::uint64_t after = 16 + static_cast<std::uint64_t>(nlibs) * 12;
    if (!b.contains(0, after))
      return util::error(fmt::format("old-format ld.so.cache claims {} entries, more than the file holds", nlibs));
    const auto aligned = (after + 7) & ~std::uint64_t{7};
    if (aligned + 20 <= size && std::memcmp(data + aligned, k_new_magic, 20) == 0)
      return parse_new(b, static_cast<std::size_t>(aligned), "old+new");
    LdSoCache cache;
    cache.format = "old";
    for (std::uint32_t i = 0; i < nlibs; ++i) {
      const auto e = 16 + static_cast<std::uint64_t>(i) * 12;
      CacheEntry entry;
      entry.flags = static_cast<std::int32_t>(*b.u32(e));
      // Old-format strings count from the end of the entries.
      const auto key = b.cstr(after + *b.u32(e + 4));
      const auto value = b.cstr(after + *b.u32(e + 8));
      if (!key || !value) return util::error(fmt::format("ld.so.cache entry {} points outside the file", i));
      entry.name = *key;
      entry.path = *value;
      cache.entries.push_back(std::move(entry));
    }
    return cache;
  }
  return util::error("not an ld.so.cache file (unknown magic)");
}

namespace {
// Of the entries for one name (in file order), the one best_entry takes.
template <typename Entries>
const CacheEntry* best_of(const Entries& entries, bool is_64, std::uint16_t machine,
                          const std::vector<std::string>& hwcaps_subdirs) {
  const std::int32_t required = machine == 183 ? k_flag_aarch64_lib64 : k_flag_x8664_lib64;
  const CacheEntry* best = nullptr;
  std::size_t best_priority = 0;  // 0: no glibc-hwcaps; higher is better
  for (const CacheEntry* e : entries) {
    if ((e->flags & k_flag_type_mask) != k_flag_elf_libc6 || (is_64 && (e->flags & k_flag_required_mask) != required))
      continue;
    std::size_t priority = 0;
    if (!e->hwcaps_subdir.empty()) {
      const auto& hw = hwcaps_subdirs;
      const auto it = std::find(hw.begin(), hw.end(), "glibc-hwcaps/" + e->hwcaps_subdir);
      if (it == hw.end()) continue;  // the CPU does not support that level
      priority = hw.size() - static_cast<std::size_t>(it - hw.begin());
    } else if (e->hwcap != 0) {
      continue;  // legacy hwcap-specific entries: not for this loader
    }
    if (!best || priority > best_priority) {
      best = e;
      best_priority = priority;
    }
  }
  return best;
}
}  // namespace

const CacheEntry* best_entry(const LdSoCache& cache, std::string_view name, bool is_64, std::uint16_t machine,
                             const std::vector<std::string>& hwcaps_subdirs) {
  std::vector<const CacheEntry*> named;
  for (const auto& e : cache.entries)
    if (e.name == name) named.push_back(&e);
  return best_of(named, is_64, machine, hwcaps_subdirs);
}

CacheIndex::CacheIndex(const LdSoCache& cache) {
  for (const auto& e : cache.entries) m_named[e.name].push_back(&e);
}

const CacheEntry* CacheIndex::best_entry(std::string_view name, bool is_64, std::uint16_t machine,
                                         const std::vector<std::string>& hwcaps_subdirs) const {
  const auto it = m_named.find(name);
  return it == m_named.end() ? nullptr : best_of(it->second, is_64, machine, hwcaps_subdirs);
}

}  // namespace cudoctor::ld
