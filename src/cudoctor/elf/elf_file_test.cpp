// parse_elf on images built in memory: both classes, both byte orders, every truncation
// point, the gABI's extended numbering in section 0, and hostile headers.
#include "cudoctor/elf/elf_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cudoctor::elf {
namespace {

// Writes integers of the image's byte order and class into a growing buffer.
struct Writer {
  bool is64 = true;
  bool be = false;
  std::vector<unsigned char> d;

  void put(std::size_t off, std::uint64_t v, std::size_t n) {
    if (d.size() < off + n) d.resize(off + n);
    for (std::size_t i = 0; i < n; ++i) d[off + (be ? n - 1 - i : i)] = static_cast<unsigned char>(v >> (8 * i));
  }
  void u16(std::size_t off, std::uint64_t v) { put(off, v, 2); }
  void u32(std::size_t off, std::uint64_t v) { put(off, v, 4); }
  void u64(std::size_t off, std::uint64_t v) { put(off, v, 8); }
  void addr(std::size_t off, std::uint64_t v) { put(off, v, is64 ? 8 : 4); }
  // Appends n zero bytes at the next multiple of align; returns their offset.
  std::size_t reserve(std::size_t n, std::size_t align = 8) {
    const auto off = (d.size() + align - 1) / align * align;
    d.resize(off + n);
    return off;
  }
  std::size_t bytes(const std::string& s) {
    const auto off = reserve(s.size(), 1);
    std::copy(s.begin(), s.end(), d.begin() + static_cast<std::ptrdiff_t>(off));
    return off;
  }
};

// Where each structure starts; end is the file size.
struct Layout {
  std::size_t phdrs = 0, interp = 0, shdrs = 0, shstrtab = 0, dynamic = 0, dynstr = 0, verdef = 0, verneed = 0, end = 0;
};

struct Spec {
  bool is64 = true;
  bool be = false;
  bool verneed = true;  // last in the file, so every byte of the image is read
  bool verdef = true;
};

constexpr std::uint64_t k_base = 0x400000;  // the PT_LOAD's vaddr: the file is mapped there whole

struct Image {
  Writer w;
  Layout at;
  // Offsets of header fields, by class.
  std::size_t phnum_field() const { return w.is64 ? 56 : 44; }
  std::size_t shnum_field() const { return w.is64 ? 60 : 48; }
  std::size_t shstrndx_field() const { return w.is64 ? 62 : 50; }
  std::size_t shoff_field() const { return w.is64 ? 40 : 32; }
  std::size_t shentsize() const { return w.is64 ? 64 : 40; }
  // Section 0's sh_size, sh_link and sh_info: where extended numbering keeps its values.
  std::size_t sh0_size() const { return at.shdrs + (w.is64 ? 32 : 20); }
  std::size_t sh0_link() const { return at.shdrs + (w.is64 ? 40 : 24); }
  std::size_t sh0_info() const { return at.shdrs + (w.is64 ? 44 : 28); }
};

// ehdr | 3 phdrs (PT_LOAD, PT_INTERP, PT_DYNAMIC) | interp | 3 shdrs (null, .dynstr,
// .shstrtab) | .shstrtab | dynamic | .dynstr | verdef (base, ME_2.0) | verneed (libfoo.so.1:
// FOO_1.0): the order parse_elf reads them in, so a cut at a structure fails in that structure.
Image build(const Spec& s) {
  Image img;
  auto& w = img.w;
  w.is64 = s.is64;
  w.be = s.be;
  const std::size_t ehsize = s.is64 ? 64 : 52, phent = s.is64 ? 56 : 32, shent = s.is64 ? 64 : 40,
                    dynent = s.is64 ? 16 : 8;
  w.reserve(ehsize);
  img.at.phdrs = w.reserve(3 * phent);
  img.at.interp = w.bytes(std::string("/lib/ld-test.so.1") + '\0');
  img.at.shdrs = w.reserve(3 * shent);
  img.at.shstrtab = w.bytes(std::string("\0.dynstr\0.shstrtab", 19));
  std::vector<std::pair<std::int64_t, std::uint64_t>> dyn = {{1, 0}, {14, 0}, {29, 0}, {5, 0}, {10, 0}};
  if (s.verdef) dyn.insert(dyn.end(), {{0x6ffffffc, 0}, {0x6ffffffd, 2}});
  if (s.verneed) dyn.insert(dyn.end(), {{0x6ffffffe, 0}, {0x6fffffff, 1}});
  dyn.emplace_back(0, 0);  // DT_NULL
  img.at.dynamic = w.reserve(dyn.size() * dynent);
  constexpr char k_strs[] = "\0libfoo.so.1\0libme.so\0$ORIGIN/../lib\0FOO_1.0\0ME_2.0";
  const std::string strs(k_strs, sizeof k_strs);
  img.at.dynstr = w.bytes(strs);
  const auto str = [&](const char* v) { return strs.find(v); };
  dyn[0].second = str("libfoo.so.1");
  dyn[1].second = str("libme.so");
  dyn[2].second = str("$ORIGIN/../lib");
  dyn[3].second = k_base + img.at.dynstr;
  dyn[4].second = strs.size();
  if (s.verdef) {
    // Elf_Verdef (20 bytes) + Elf_Verdaux (8), twice; the first is VER_FLG_BASE.
    const auto v = img.at.verdef = w.reserve(56);
    for (std::size_t i = 0; i < 2; ++i) {
      const auto o = v + 28 * i;
      w.u16(o, 1);
      w.u16(o + 2, i == 0 ? 1 : 0);
      w.u16(o + 4, i + 1);
      w.u16(o + 6, 1);
      w.u32(o + 12, 20);
      w.u32(o + 16, i == 0 ? 28 : 0);
      w.u32(o + 20, str(i == 0 ? "libme.so" : "ME_2.0"));
    }
    dyn[5].second = k_base + v;
  }
  if (s.verneed) {
    // Elf_Verneed (16 bytes) + Elf_Vernaux (16).
    const auto v = img.at.verneed = w.reserve(32);
    w.u16(v, 1);
    w.u16(v + 2, 1);
    w.u32(v + 4, str("libfoo.so.1"));
    w.u32(v + 8, 16);
    w.u32(v + 16 + 8, str("FOO_1.0"));
    dyn[s.verdef ? 7 : 5].second = k_base + v;
  }
  img.at.end = w.d.size();
  for (std::size_t i = 0; i < dyn.size(); ++i) {
    w.put(img.at.dynamic + i * dynent, static_cast<std::uint64_t>(dyn[i].first), dynent / 2);
    w.addr(img.at.dynamic + i * dynent + dynent / 2, dyn[i].second);
  }

  // ELF header.
  w.d[0] = 0x7f, w.d[1] = 'E', w.d[2] = 'L', w.d[3] = 'F';
  w.d[4] = static_cast<unsigned char>(s.is64 ? 2 : 1);
  w.d[5] = static_cast<unsigned char>(s.be ? 2 : 1);
  w.d[6] = 1;
  w.u16(16, 3);                // ET_DYN
  w.u16(18, s.is64 ? 62 : 3);  // EM_X86_64, EM_386
  w.u32(20, 1);                // EV_CURRENT
  w.addr(s.is64 ? 32 : 28, img.at.phdrs);
  w.addr(img.shoff_field(), img.at.shdrs);
  w.u16(s.is64 ? 52 : 40, ehsize);
  w.u16(s.is64 ? 54 : 42, phent);
  w.u16(img.phnum_field(), 3);
  w.u16(s.is64 ? 58 : 46, shent);
  w.u16(img.shnum_field(), 3);
  w.u16(img.shstrndx_field(), 2);

  // Program headers: {type, offset, vaddr, filesz}.
  const std::uint64_t phdrs[3][4] = {{1, 0, k_base, img.at.end},
                                     {3, img.at.interp, k_base + img.at.interp, 18},
                                     {2, img.at.dynamic, k_base + img.at.dynamic, dyn.size() * dynent}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto o = img.at.phdrs + i * phent;
    w.u32(o, phdrs[i][0]);
    if (s.is64) {
      w.u64(o + 8, phdrs[i][1]);
      w.u64(o + 16, phdrs[i][2]);
      w.u64(o + 32, phdrs[i][3]);
      w.u64(o + 40, phdrs[i][3]);
    } else {
      w.u32(o + 4, phdrs[i][1]);
      w.u32(o + 8, phdrs[i][2]);
      w.u32(o + 16, phdrs[i][3]);
      w.u32(o + 20, phdrs[i][3]);
    }
  }
  // Section headers: {name, type, offset, size}; section 0 is all zero.
  const std::uint64_t shdrs[2][4] = {{1, 3, img.at.dynstr, strs.size()}, {9, 3, img.at.shstrtab, 19}};
  for (std::size_t i = 0; i < 2; ++i) {
    const auto o = img.at.shdrs + (i + 1) * shent;
    w.u32(o, shdrs[i][0]);
    w.u32(o + 4, shdrs[i][1]);
    w.addr(o + (s.is64 ? 24 : 16), shdrs[i][2]);
    w.addr(o + (s.is64 ? 32 : 20), shdrs[i][3]);
  }
  return img;
}

// What a caller relies on of a model, as text, to compare the sources' answers.
std::string summary(const util::Result<ElfFile>& f) {
  if (!f) return "error: " + f.error();
  std::string s = f->interpreter + "|" + f->soname + "|" + f->rpath.value_or("-") + "|" + f->runpath.value_or("-") +
                  "|" + std::to_string(f->segments.size()) + "|" + std::to_string(f->flags_1);
  for (const auto& n : f->needed) s += "|N " + n;
  for (const auto& x : f->sections) s += "|S " + x.name + "@" + std::to_string(x.offset);
  for (const auto& v : f->version_needs)
    for (const auto& x : v.versions) s += "|V " + v.file + " " + x;
  for (const auto& d : f->version_defs) s += "|D " + d;
  return s;
}

// The first size bytes of d through pread-like reads, a block of block bytes at a time.
util::Result<ElfFile> parse_read(const std::vector<unsigned char>& d, std::size_t size, std::size_t block) {
  ReadSource source(
      size,
      [&](std::uint64_t off, unsigned char* buf, std::size_t n) -> util::Result<std::size_t> {
        const auto k = off >= size ? 0 : std::min<std::size_t>(n, size - static_cast<std::size_t>(off));
        std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(off), k, buf);
        return k;
      },
      block);
  return parse_elf(source);
}

// Parsed from memory; reads at offsets, in blocks of every size that matters (one block,
// blocks smaller than every structure, blocks that split the header), must give the same.
util::Result<ElfFile> parse(const std::vector<unsigned char>& d, std::size_t size) {
  auto f = parse_elf(d.data(), size);
  for (const std::size_t block : {ReadSource::k_block, std::size_t{1}, std::size_t{7}, std::size_t{60}})
    EXPECT_EQ(summary(parse_read(d, size, block)), summary(f)) << "blocks of " << block << ", " << size << " bytes";
  return f;
}
util::Result<ElfFile> parse(const std::vector<unsigned char>& d) {
  return parse_elf(d.data(), d.size());
}

// Both classes and both byte orders.
const Spec k_shapes[] = {{true, false}, {true, true}, {false, false}, {false, true}};
std::string name(const Spec& s) {
  return std::string(s.is64 ? "ELFCLASS64" : "ELFCLASS32") + (s.be ? " big-endian" : " little-endian");
}

TEST(ElfFile, ParsesEveryShapeIntoOneModel) {
  for (const auto& s : k_shapes) {
    SCOPED_TRACE(name(s));
    const auto img = build(s);
    const auto f = parse(img.w.d);
    ASSERT_TRUE(f) << f.error();
    EXPECT_EQ(f->is_64, s.is64);
    EXPECT_EQ(f->big_endian, s.be);
    EXPECT_EQ(f->type, 3);
    EXPECT_EQ(f->machine, s.is64 ? 62 : 3);
    ASSERT_EQ(f->segments.size(), 3u);
    EXPECT_EQ(f->segments[0].vaddr, k_base);
    EXPECT_EQ(f->segments[0].filesz, img.at.end);
    EXPECT_EQ(f->interpreter, "/lib/ld-test.so.1");
    ASSERT_EQ(f->sections.size(), 3u);
    EXPECT_EQ(f->sections[1].name, ".dynstr");
    EXPECT_EQ(f->sections[2].name, ".shstrtab");
    ASSERT_NE(f->section(".dynstr"), nullptr);
    EXPECT_EQ(f->section(".dynstr")->offset, img.at.dynstr);
    EXPECT_TRUE(f->has_dynamic);
    EXPECT_EQ(f->needed, std::vector<std::string>{"libfoo.so.1"});
    EXPECT_EQ(f->soname, "libme.so");
    EXPECT_FALSE(f->rpath);
    ASSERT_TRUE(f->runpath);
    EXPECT_EQ(*f->runpath, "$ORIGIN/../lib");
    ASSERT_EQ(f->version_needs.size(), 1u);
    EXPECT_EQ(f->version_needs[0].file, "libfoo.so.1");
    EXPECT_EQ(f->version_needs[0].versions, std::vector<std::string>{"FOO_1.0"});
    EXPECT_EQ(f->version_defs, std::vector<std::string>{"ME_2.0"})
        << "the VER_FLG_BASE entry is the file, not a version";
  }
}

// Every proper prefix of the image is an error, never a crash or a partial model.
TEST(ElfFile, EveryTruncationIsAnError) {
  for (const auto& s : k_shapes) {
    SCOPED_TRACE(name(s));
    const auto img = build(s);
    for (std::size_t n = 0; n < img.at.end; ++n) {
      const auto f = parse(img.w.d, n);
      ASSERT_FALSE(f) << "cut at " << n << " of " << img.at.end;
      EXPECT_FALSE(f.error().empty());
    }
  }
}

TEST(ElfFile, TruncationNamesTheStructureThatIsCut) {
  for (const auto& s : k_shapes) {
    SCOPED_TRACE(name(s));
    const auto img = build(s);
    const auto& d = img.w.d;
    const auto& at = img.at;
    EXPECT_EQ(parse(d, 15).error(), "not an ELF file: 15 bytes");
    EXPECT_EQ(parse(d, s.is64 ? 63 : 51).error(), "truncated ELF header");
    EXPECT_EQ(parse(d, at.phdrs + 1).error(), "truncated program header table");
    EXPECT_EQ(parse(d, at.shdrs + 1).error(), "truncated section header table");
    EXPECT_EQ(parse(d, at.dynamic + 1).error(), "truncated dynamic section");
    EXPECT_EQ(parse(d, at.dynstr + 1).error(), "truncated dynamic string table");
    EXPECT_EQ(parse(d, at.verneed + 15).error(), "truncated version needs (.gnu.version_r)");
    EXPECT_EQ(parse(d, at.verneed + 16 + 15).error(), "truncated version need entry");
    // Without version needs the definitions come last.
    const auto defs = build({s.is64, s.be, false, true});
    EXPECT_EQ(parse(defs.w.d, defs.at.verdef + 19).error(), "truncated version definitions (.gnu.version_d)");
    EXPECT_EQ(parse(defs.w.d, defs.at.verdef + 28 + 20 + 3).error(), "truncated version definition entry");
  }
}

// gABI "ELF Header": e_shnum 0 with e_shoff set means section 0's sh_size holds the count.
TEST(ElfFile, SectionCountInSectionZero) {
  for (const auto& s : k_shapes) {
    SCOPED_TRACE(name(s));
    auto img = build(s);
    img.w.u16(img.shnum_field(), 0);
    img.w.addr(img.sh0_size(), 3);
    const auto f = parse(img.w.d);
    ASSERT_TRUE(f) << f.error();
    ASSERT_EQ(f->sections.size(), 3u);
    EXPECT_EQ(f->sections[2].name, ".shstrtab");
    // A count the file cannot hold is a truncated table, even near 2^64 (no overflow).
    img.w.addr(img.sh0_size(), s.is64 ? ~std::uint64_t{0} / 2 : 0xffffffffu);
    EXPECT_EQ(parse(img.w.d).error(), "truncated section header table");
    // And a section 0 that is not there cannot give one.
    img.w.addr(img.shoff_field(), img.at.end - 8);
    EXPECT_EQ(parse(img.w.d).error(), "truncated section header table (section 0 holds the extended counts)");
  }
}

// gABI: e_shstrndx SHN_XINDEX (0xffff) means section 0's sh_link holds the index.
TEST(ElfFile, SectionNameTableIndexInSectionZero) {
  for (const auto& s : k_shapes) {
    SCOPED_TRACE(name(s));
    auto img = build(s);
    img.w.u16(img.shstrndx_field(), 0xffff);
    img.w.u32(img.sh0_link(), 2);
    const auto f = parse(img.w.d);
    ASSERT_TRUE(f) << f.error();
    EXPECT_EQ(f->sections[1].name, ".dynstr");
    // An index past the table leaves the sections unnamed, as before.
    img.w.u32(img.sh0_link(), 7);
    const auto g = parse(img.w.d);
    ASSERT_TRUE(g) << g.error();
    EXPECT_EQ(g->sections[1].name, "");
  }
}

// gABI: e_phnum PN_XNUM (0xffff) means section 0's sh_info holds the count.
TEST(ElfFile, ProgramHeaderCountInSectionZero) {
  for (const auto& s : k_shapes) {
    SCOPED_TRACE(name(s));
    auto img = build(s);
    img.w.u16(img.phnum_field(), 0xffff);
    img.w.u32(img.sh0_info(), 3);
    const auto f = parse(img.w.d);
    ASSERT_TRUE(f) << f.error();
    EXPECT_EQ(f->segments.size(), 3u);
    EXPECT_EQ(f->needed, std::vector<std::string>{"libfoo.so.1"});
    img.w.u32(img.sh0_info(), 0xffffffffu);
    EXPECT_EQ(parse(img.w.d).error(), "truncated program header table");
    img.w.addr(img.shoff_field(), 0);
    EXPECT_EQ(parse(img.w.d).error(), "e_phnum is PN_XNUM (0xffff) but there is no section header 0 to hold the count");
  }
}

TEST(ElfFile, HostileHeadersGiveClearErrors) {
  const auto img = build({});
  auto d = img.w.d;
  d[3] = 'G';
  EXPECT_EQ(parse(d).error(), "not an ELF file (magic 7f 45 4c 47)");
  d = img.w.d;
  d[4] = 3;
  EXPECT_EQ(parse(d).error(), "unknown ELF class 3");
  d = img.w.d;
  d[5] = 0;
  EXPECT_EQ(parse(d).error(), "unknown ELF data encoding 0");

  auto w = img.w;
  w.u16(54, 8);  // e_phentsize
  EXPECT_EQ(parse(w.d).error(), "program header entries of 8 bytes");
  w = img.w;
  w.u16(58, 12);  // e_shentsize
  EXPECT_EQ(parse(w.d).error(), "section header entries of 12 bytes");
  w = img.w;
  w.u64(32, ~std::uint64_t{0} - 8);  // e_phoff near 2^64
  EXPECT_EQ(parse(w.d).error(), "truncated program header table");
}

TEST(ElfFile, HostileDynamicSectionGivesClearErrors) {
  const auto img = build({});
  auto w = img.w;
  w.u64(img.at.dynamic + 8, 0xffffff);  // DT_NEEDED's string offset
  EXPECT_EQ(parse(w.d).error(), "dynamic string offset 16777215 outside the string table");
  w = img.w;
  w.u64(img.at.dynamic + 3 * 16 + 8, 0x10);  // DT_STRTAB below the PT_LOAD
  EXPECT_EQ(parse(w.d).error(), "DT_STRTAB 0x10 is in no loaded segment");
  w = img.w;
  w.u64(img.at.dynamic + 3 * 16, 0x7000);  // DT_STRTAB replaced by an unknown tag
  EXPECT_EQ(parse(w.d).error(), "dynamic section without a string table (DT_STRTAB, DT_STRSZ)");
  w = img.w;
  w.u64(img.at.dynamic + 7 * 16 + 8, 0x10);  // DT_VERNEED below the PT_LOAD
  EXPECT_EQ(parse(w.d).error(), "DT_VERNEED is in no loaded segment");
  w = img.w;
  w.u64(img.at.dynamic + 5 * 16 + 8, 0x10);  // DT_VERDEF
  EXPECT_EQ(parse(w.d).error(), "DT_VERDEF is in no loaded segment");
  w = img.w;
  w.u32(img.at.verneed + 12, 0xfffffff0);  // vn_next far past the end, with vn_cnt 2 more
  w.u64(img.at.dynamic + 8 * 16 + 8, 2);
  EXPECT_EQ(parse(w.d).error(), "truncated version needs (.gnu.version_r)");
}

TEST(ElfFile, FileWithoutDynamicOrSectionsIsStillAModel) {
  auto img = build({});
  img.w.addr(img.shoff_field(), 0);     // no section header table
  img.w.u32(img.at.phdrs + 2 * 56, 6);  // PT_DYNAMIC becomes PT_PHDR
  const auto f = parse(img.w.d);
  ASSERT_TRUE(f) << f.error();
  EXPECT_TRUE(f->sections.empty());
  EXPECT_FALSE(f->has_dynamic);
  EXPECT_TRUE(f->needed.empty());
}

// Reads at offsets: what fails is the error, not a truncation it looks like; what is read is
// a few blocks, and a string with no end is cut off by the read budget, not read whole.
TEST(ElfFile, ReadsAtOffsetsSayWhyTheyFailed) {
  const auto img = build({});
  const auto& d = img.w.d;
  const auto reads = [&](std::uint64_t fail_at, std::size_t shrink_to) {
    return [&d, fail_at, shrink_to](std::uint64_t off, unsigned char* buf, std::size_t n) -> util::Result<std::size_t> {
      if (off + n > fail_at) return util::error("/lib/libx.so: Input/output error");
      const auto k = off >= shrink_to ? 0 : std::min<std::size_t>(n, shrink_to - static_cast<std::size_t>(off));
      std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(off), k, buf);
      return k;
    };
  };
  ReadSource io(d.size(), reads(img.at.dynamic, d.size()), 16);
  EXPECT_EQ(parse_elf(io).error(), "/lib/libx.so: Input/output error");
  ReadSource shrank(d.size(), reads(~0ull, img.at.dynamic), 16);
  EXPECT_EQ(parse_elf(shrank).error(), "changed while it was read (the file shrank)");
  ReadSource whole(d.size(), reads(~0ull, d.size()));
  ASSERT_TRUE(parse_elf(whole));
  EXPECT_EQ(whole.bytes_read(), d.size()) << "one block holds this small file: each byte read once";
}

TEST(ElfFile, AStringWithNoEndStopsAtTheReadBudget) {
  // A string table of 1 TiB of 'a' with no NUL: DT_SONAME points into it.
  auto img = build({});
  const std::uint64_t big = 1ull << 40;
  auto w = img.w;
  w.u64(img.at.dynamic + 4 * 16 + 8, big);      // DT_STRSZ
  w.addr(img.at.phdrs + 32, big + img.at.end);  // PT_LOAD p_filesz
  const auto& d = w.d;
  std::uint64_t asked = 0;
  ReadSource source(big + img.at.end, [&](std::uint64_t off, unsigned char* buf, std::size_t n) {
    asked += n;
    for (std::size_t i = 0; i < n; ++i) buf[i] = off + i < d.size() && off + i < img.at.dynstr + 1 ? d[off + i] : 'a';
    return util::Result<std::size_t>(n);
  });
  EXPECT_EQ(parse_elf(source).error(), "its headers ask for more than 64 MiB of reads");
  EXPECT_LE(asked, ReadSource::k_budget);
}

}  // namespace
}  // namespace cudoctor::elf
