// parse_ld_so_cache and best_entry on caches built in memory, in each format glibc's
// ldconfig has written: old "ld.so-1.7.0", new "glibc-ld.so.cache1.1" (either byte order),
// the two combined, and the new format with the glibc-hwcaps extension.
#include "cudoctor/ld/ld_so_cache.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cudoctor::ld {
namespace {

struct Lib {
  std::int32_t flags = k_flag_elf_libc6 | k_flag_x8664_lib64;
  std::string key, value;
  std::uint64_t hwcap = 0;
};

constexpr std::uint64_t k_hwcap_ext = 1ull << 62;  // DL_CACHE_HWCAP_EXTENSION, the low 32 bits an index

struct Buffer {
  bool be = false;
  std::vector<unsigned char> d;
  void put(std::size_t off, std::uint64_t v, std::size_t n) {
    if (d.size() < off + n) d.resize(off + n);
    for (std::size_t i = 0; i < n; ++i) d[off + (be ? n - 1 - i : i)] = static_cast<unsigned char>(v >> (8 * i));
  }
  void u32(std::size_t off, std::uint64_t v) { put(off, v, 4); }
  void u64(std::size_t off, std::uint64_t v) { put(off, v, 8); }
  void text(std::size_t off, const std::string& s) {
    if (d.size() < off + s.size()) d.resize(off + s.size());
    std::copy(s.begin(), s.end(), d.begin() + static_cast<std::ptrdiff_t>(off));
  }
  std::size_t string(const std::string& s) {
    const auto off = d.size();
    text(off, s + '\0');
    return off;
  }
  void align(std::size_t a) { d.resize((d.size() + a - 1) / a * a); }
};

const std::vector<Lib> k_libs = {
    {k_flag_elf_libc6 | k_flag_x8664_lib64, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 0},
    {k_flag_elf_libc6, "libc.so.6", "/lib32/libc.so.6", 0},
    {k_flag_elf_libc6 | k_flag_x8664_lib64, "libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", 0},
};

// The new-format header and entries at start, their strings (and hwcaps names) after them,
// the extension section last; string offsets count from start. The old part of a combined
// file points at the same strings, counting from the end of its entries (old_strings).
void write_new(Buffer& b, std::size_t start, const std::vector<Lib>& libs, const std::vector<std::string>& hwcaps,
               std::size_t old_strings = 0, std::size_t old_entries = 0) {
  b.text(start, "glibc-ld.so.cache1.1");
  b.u32(start + 20, libs.size());
  b.d.resize(start + 48);
  b.d[start + 28] = static_cast<unsigned char>(b.be ? 3 : 2);  // cache_file_new.flags: the byte order
  const auto entries = start + 48;
  b.d.resize(entries + 24 * libs.size());
  const auto strings_at = b.d.size();
  for (std::size_t i = 0; i < libs.size(); ++i) {
    const auto e = entries + 24 * i;
    const auto key = b.string(libs[i].key), value = b.string(libs[i].value);
    b.u32(e, static_cast<std::uint32_t>(libs[i].flags));
    b.u32(e + 4, key - start);
    b.u32(e + 8, value - start);
    b.u64(e + 16, libs[i].hwcap);
    if (old_entries) {
      const auto o = old_entries + 12 * i;
      b.u32(o, static_cast<std::uint32_t>(libs[i].flags));
      b.u32(o + 4, key - old_strings);
      b.u32(o + 8, value - old_strings);
    }
  }
  b.u32(start + 24, b.d.size() - strings_at);  // len_strings
  if (hwcaps.empty()) return;
  std::vector<std::size_t> names;
  for (const auto& h : hwcaps) names.push_back(b.string(h));
  b.align(8);
  const auto ext = b.d.size();
  b.u32(start + 32, ext - start);
  b.u32(ext, 0xeaa42174);  // cache_extension magic
  b.u32(ext + 4, 1);       // one section
  b.u32(ext + 8, 1);       // cache_extension_tag_glibc_hwcaps
  b.u32(ext + 16, ext + 24 - start);
  b.u32(ext + 20, 4 * names.size());
  for (std::size_t i = 0; i < names.size(); ++i) b.u32(ext + 24 + 4 * i, names[i] - start);
}

std::vector<unsigned char> new_format(const std::vector<Lib>& libs, bool be = false,
                                      const std::vector<std::string>& hwcaps = {}) {
  Buffer b;
  b.be = be;
  write_new(b, 0, libs, hwcaps);
  return b.d;
}

// Old format: {"ld.so-1.7.0" padded to 12, u32 nlibs, entries {i32 flags, u32 key, u32
// value}}, strings counted from the end of the entries.
std::vector<unsigned char> old_format(const std::vector<Lib>& libs) {
  Buffer b;
  b.text(0, "ld.so-1.7.0");
  b.u32(12, libs.size());
  const auto strings = 16 + 12 * libs.size();
  b.d.resize(strings);
  for (std::size_t i = 0; i < libs.size(); ++i) {
    b.u32(16 + 12 * i, static_cast<std::uint32_t>(libs[i].flags));
    b.u32(16 + 12 * i + 4, b.string(libs[i].key) - strings);
    b.u32(16 + 12 * i + 8, b.string(libs[i].value) - strings);
  }
  return b.d;
}

// ldconfig's default until glibc 2.32: the old format, then the new one 8-byte aligned, both
// pointing into one string table at the end.
std::vector<unsigned char> combined(const std::vector<Lib>& libs) {
  Buffer b;
  b.text(0, "ld.so-1.7.0");
  b.u32(12, libs.size());
  const auto old_strings = 16 + 12 * libs.size();
  b.d.resize(old_strings);
  b.align(8);
  write_new(b, b.d.size(), libs, {}, old_strings, 16);
  return b.d;
}

util::Result<LdSoCache> parse(const std::vector<unsigned char>& d, std::size_t n) {
  return parse_ld_so_cache(d.data(), n);
}
util::Result<LdSoCache> parse(const std::vector<unsigned char>& d) {
  return parse(d, d.size());
}

void expect_libs(const LdSoCache& c, const std::vector<Lib>& libs) {
  ASSERT_EQ(c.entries.size(), libs.size());
  for (std::size_t i = 0; i < libs.size(); ++i) {
    EXPECT_EQ(c.entries[i].name, libs[i].key);
    EXPECT_EQ(c.entries[i].path, libs[i].value);
    EXPECT_EQ(c.entries[i].flags, libs[i].flags);
  }
}

TEST(LdSoCache, OldFormat) {
  const auto c = parse(old_format(k_libs));
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->format, "old");
  expect_libs(*c, k_libs);
}

TEST(LdSoCache, NewFormatInBothByteOrders) {
  auto libs = k_libs;
  libs[2].hwcap = 0x0000000100000002ull;  // a legacy hwcap mask: kept, not an extension index
  for (const bool be : {false, true}) {
    SCOPED_TRACE(be ? "big-endian" : "little-endian");
    const auto c = parse(new_format(libs, be));
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->format, "new");
    expect_libs(*c, libs);
    EXPECT_EQ(c->entries[2].hwcap, 0x0000000100000002ull);
    EXPECT_EQ(c->entries[2].hwcaps_subdir, "");
  }
}

TEST(LdSoCache, OldAndNewCombinedReadsTheNewPart) {
  auto libs = k_libs;
  libs[0].hwcap = 0x40;  // only the new format has the field
  const auto c = parse(combined(libs));
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->format, "old+new");
  expect_libs(*c, libs);
  EXPECT_EQ(c->entries[0].hwcap, 0x40u);
}

TEST(LdSoCache, NewFormatWithGlibcHwcapsExtension) {
  const std::vector<Lib> libs = {
      {0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1", k_hwcap_ext | 0},
      {0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1", k_hwcap_ext | 1},
      {0x0303, "libfoo.so.1", "/usr/lib/libfoo.so.1", 0},
  };
  for (const bool be : {false, true}) {
    SCOPED_TRACE(be ? "big-endian" : "little-endian");
    const auto c = parse(new_format(libs, be, {"x86-64-v3", "x86-64-v2"}));
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->format, "new");
    expect_libs(*c, libs);
    EXPECT_EQ(c->entries[0].hwcaps_subdir, "x86-64-v3");
    EXPECT_EQ(c->entries[1].hwcaps_subdir, "x86-64-v2");
    EXPECT_EQ(c->entries[2].hwcaps_subdir, "");
  }
}

// Every proper prefix of every format is an error: a cache cut short is never half read.
TEST(LdSoCache, EveryTruncationIsAnError) {
  const std::vector<Lib> hw = {{0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1", k_hwcap_ext}};
  const std::vector<std::pair<const char*, std::vector<unsigned char>>> caches = {
      {"old", old_format(k_libs)},
      {"new", new_format(k_libs)},
      {"new big-endian", new_format(k_libs, true)},
      {"old+new", combined(k_libs)},
      {"new with glibc-hwcaps", new_format(hw, false, {"x86-64-v3"})},
  };
  for (const auto& [what, bytes] : caches) {
    SCOPED_TRACE(what);
    ASSERT_TRUE(parse(bytes));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const auto c = parse(bytes, n);
      ASSERT_FALSE(c) << "cut at " << n << " of " << bytes.size();
      EXPECT_FALSE(c.error().empty());
    }
  }
}

TEST(LdSoCache, TruncatedAndGarbageCachesGiveClearErrors) {
  const auto fresh = new_format(k_libs);
  EXPECT_EQ(parse(fresh, 19).error(), "not an ld.so.cache file (unknown magic)");
  EXPECT_EQ(parse(fresh, 47).error(), "truncated ld.so.cache header");
  EXPECT_EQ(parse(fresh, 48 + 24 * 3 - 1).error(), "ld.so.cache claims 3 entries, more than the file holds");
  EXPECT_EQ(parse(fresh, fresh.size() - 1).error(), "ld.so.cache entry 2 points outside the file");
  const auto old = old_format(k_libs);
  EXPECT_EQ(parse(old, 16 + 12 * 3 - 1).error(), "old-format ld.so.cache claims 3 entries, more than the file holds");
  EXPECT_EQ(parse(old, old.size() - 1).error(), "ld.so.cache entry 2 points outside the file");

  const std::vector<unsigned char> garbage(4096, 0xa5);
  EXPECT_EQ(parse(garbage).error(), "not an ld.so.cache file (unknown magic)");
  EXPECT_EQ(parse(garbage, 0).error(), "not an ld.so.cache file (unknown magic)");

  Buffer b{false, fresh};
  b.u32(20, 0xffffffffu);  // nlibs: no 32-bit count overflows the size check
  EXPECT_EQ(parse(b.d).error(), "ld.so.cache claims 4294967295 entries, more than the file holds");
  b = Buffer{false, fresh};
  b.d[28] = 1;  // flags: invalid byte order
  EXPECT_EQ(parse(b.d).error(), "ld.so.cache header says its byte order is invalid");
  b = Buffer{false, fresh};
  b.u32(48 + 24 + 8, 0xfffffff0u);  // entry 1's value
  EXPECT_EQ(parse(b.d).error(), "ld.so.cache entry 1 points outside the file");
  b = Buffer{false, old};
  b.u32(12, 0xffffffffu);
  EXPECT_EQ(parse(b.d).error(), "old-format ld.so.cache claims 4294967295 entries, more than the file holds");
}

TEST(LdSoCache, HostileHwcapsExtensionGivesClearErrors) {
  const std::vector<Lib> libs = {
      {0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1", k_hwcap_ext | 5}};
  const auto bytes = new_format(libs, false, {"x86-64-v3", "x86-64-v2"});
  EXPECT_EQ(parse(bytes).error(), "ld.so.cache entry 0 names glibc-hwcaps index 5 of 2");
  Buffer b{false, bytes};
  const std::size_t ext = b.d[32] | std::size_t{b.d[33]} << 8;
  b.u32(ext + 4, 3);  // three sections; the file holds one
  EXPECT_EQ(parse(b.d).error(), "truncated ld.so.cache extension section");
  b = Buffer{false, bytes};
  b.u32(ext + 24, 0xfffffff0u);  // the first name's string offset
  EXPECT_EQ(parse(b.d).error(), "ld.so.cache glibc-hwcaps name outside the file");
}

class BestEntry : public ::testing::Test {
 protected:
  const std::vector<Lib> m_libs = {
      {0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1", k_hwcap_ext | 0},
      {0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1", k_hwcap_ext | 1},
      {0x0303, "libfoo.so.1", "/usr/lib/libfoo.so.1", 0},
      {0x0303, "libfoo.so.1", "/usr/lib/tls/libfoo.so.1", 0x8000},  // legacy hwcap entry
      {0x0003, "libfoo.so.1", "/usr/lib32/libfoo.so.1", 0},
      {0x0a03, "libfoo.so.1", "/usr/lib/aarch64-linux-gnu/libfoo.so.1", 0},
  };
  LdSoCache m_cache = parse(new_format(m_libs, false, {"x86-64-v3", "x86-64-v2"})).value();
  std::string pick(bool is_64, std::uint16_t machine, const std::vector<std::string>& hwcaps,
                   const char* name = "libfoo.so.1") const {
    const auto* e = best_entry(m_cache, name, is_64, machine, hwcaps);
    return e ? e->path : "(none)";
  }
};

TEST_F(BestEntry, TheBestSupportedGlibcHwcapsLevelFirst) {
  EXPECT_EQ(pick(true, 62, {"glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2"}),
            "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1");
  EXPECT_EQ(pick(true, 62, {"glibc-hwcaps/x86-64-v2"}), "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1");
  EXPECT_EQ(pick(true, 62, {}), "/usr/lib/libfoo.so.1") << "no supported level: the plain entry, never tls/";
}

TEST_F(BestEntry, TheProgramsClassAndMachine) {
  EXPECT_EQ(pick(true, 183, {}), "/usr/lib/aarch64-linux-gnu/libfoo.so.1");
  EXPECT_EQ(pick(false, 3, {}), "/usr/lib/libfoo.so.1") << "a 32-bit program takes the first plain libc6 entry";
  EXPECT_EQ(pick(true, 62, {}, "libbar.so.1"), "(none)");
  const std::vector<Lib> only32 = {{0x0003, "libfoo.so.1", "/usr/lib32/libfoo.so.1", 0}};
  const auto c = parse(new_format(only32)).value();
  EXPECT_EQ(best_entry(c, "libfoo.so.1", true, 62, {}), nullptr);
  ASSERT_NE(best_entry(c, "libfoo.so.1", false, 3, {}), nullptr);
}

}  // namespace
}  // namespace cudoctor::ld
