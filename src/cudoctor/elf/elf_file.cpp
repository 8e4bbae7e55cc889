#include "cudoctor/elf/elf_file.hpp"

#include <fmt/format.h>

#include "cudoctor/elf/source.hpp"

namespace cudoctor::elf {
namespace {

// gABI constants.
constexpr std::uint32_t k_pt_load = 1, k_pt_dynamic = 2, k_pt_interp = 3;
constexpr std::int64_t k_dt_null = 0, k_dt_needed = 1, k_dt_strtab = 5, k_dt_strsz = 10, k_dt_soname = 14,
                       k_dt_rpath = 15, k_dt_runpath = 29, k_dt_flags_1 = 0x6ffffffb, k_dt_verdef = 0x6ffffffc,
                       k_dt_verdefnum = 0x6ffffffd, k_dt_verneed = 0x6ffffffe, k_dt_verneednum = 0x6fffffff;
constexpr std::uint16_t k_pn_xnum = 0xffff;     // e_phnum: the count is in section 0's sh_info
constexpr std::uint16_t k_shn_xindex = 0xffff;  // e_shstrndx: the index is in section 0's sh_link
constexpr std::size_t k_max_entries = 1 << 20;  // no honest file has more; bounds loops on garbage

util::Error fail(const std::string& what) {
  return util::error(what);
}

// The file with its class: reads of address-sized fields and the header's offsets.
struct Reader {
  Source& b;
  bool is64;
};

// The ELF header's table geometry, with the extended numbering of section 0 applied.
struct Header {
  std::uint64_t phoff = 0, shoff = 0;
  std::uint16_t phentsize = 0, shentsize = 0;
  std::uint64_t phnum = 0, shnum = 0, shstrndx = 0;
};

// The file offset of a virtual address, through the PT_LOAD that maps it (as ld.so does).
std::optional<std::uint64_t> vaddr_to_offset(const std::vector<Segment>& segments, std::uint64_t vaddr) {
  for (const auto& s : segments)
    if (s.type == k_pt_load && vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return s.offset + (vaddr - s.vaddr);
  return std::nullopt;
}

// e_ident, e_type, e_machine and the table geometry. The caller has checked the magic and
// set the byte order; the header is 52 bytes in ELFCLASS32, 64 in ELFCLASS64.
util::Result<Header> read_header(const Reader& r, ElfFile& f) {
  const auto hb = r.b.range(0, r.is64 ? 64u : 52u);
  if (!hb) return fail(r.b.error().empty() ? "truncated ELF header" : r.b.error());
  const auto& b = *hb;
  const auto addr = [&](std::uint64_t o) { return r.is64 ? *b.u64(o) : *b.u32(o); };
  f.type = *b.u16(16);
  f.machine = *b.u16(18);
  Header h;
  h.phoff = addr(r.is64 ? 32 : 28);
  h.shoff = addr(r.is64 ? 40 : 32);
  h.phentsize = *b.u16(r.is64 ? 54 : 42);
  h.phnum = *b.u16(r.is64 ? 56 : 44);
  h.shentsize = *b.u16(r.is64 ? 58 : 46);
  h.shnum = *b.u16(r.is64 ? 60 : 48);
  h.shstrndx = *b.u16(r.is64 ? 62 : 50);
  // A section header table is there when e_shoff is not 0; its entries must be whole.
  if (h.shoff != 0 && h.shentsize < (r.is64 ? 64u : 40u))
    return fail(fmt::format("section header entries of {} bytes", h.shentsize));
  // gABI, "ELF Header" and "Sections": counts too large for the header's 16-bit fields live
  // in section header 0. e_shnum 0 with a section header table: sh_size holds the count;
  // e_shstrndx SHN_XINDEX: sh_link holds the index; e_phnum PN_XNUM: sh_info holds the count
  // (readelf and the kernel's core dumps agree; glibc's ld.so never sees such a file).
  const bool in_zero = h.phnum == k_pn_xnum || (h.shoff != 0 && (h.shnum == 0 || h.shstrndx == k_shn_xindex));
  if (!in_zero) return h;
  if (h.shoff == 0) return fail("e_phnum is PN_XNUM (0xffff) but there is no section header 0 to hold the count");
  const auto zero = r.b.range(h.shoff, h.shentsize);
  if (!zero) return fail("truncated section header table (section 0 holds the extended counts)");
  if (h.shnum == 0) h.shnum = r.is64 ? *zero->u64(32) : *zero->u32(20);
  if (h.shstrndx == k_shn_xindex) h.shstrndx = *zero->u32(r.is64 ? 40 : 24);
  if (h.phnum == k_pn_xnum) h.phnum = *zero->u32(r.is64 ? 44 : 28);
  return h;
}

// The program header table: type, offset, vaddr, filesz, memsz of each entry.
util::Result<std::vector<Segment>> read_segments(const Reader& r, const Header& h) {
  std::vector<Segment> out;
  if (h.phnum == 0) return out;
  auto& b = r.b;
  if (h.phentsize < (r.is64 ? 56u : 32u)) return fail(fmt::format("program header entries of {} bytes", h.phentsize));
  // phnum < 2^32 and phentsize < 2^16: the product cannot overflow.
  const auto table = b.range(h.phoff, h.phnum * h.phentsize);
  if (!table) return fail("truncated program header table");
  for (std::uint64_t i = 0; i < h.phnum; ++i) {
    const auto o = i * h.phentsize;
    Segment s;
    s.type = *table->u32(o);
    if (r.is64) {
      s.offset = *table->u64(o + 8);
      s.vaddr = *table->u64(o + 16);
      s.filesz = *table->u64(o + 32);
      s.memsz = *table->u64(o + 40);
    } else {
      s.offset = *table->u32(o + 4);
      s.vaddr = *table->u32(o + 8);
      s.filesz = *table->u32(o + 16);
      s.memsz = *table->u32(o + 20);
    }
    out.push_back(s);
  }
  return out;
}

// PT_INTERP's NUL-terminated path; "" when there is none or it does not fit.
std::string read_interpreter(Source& b, const std::vector<Segment>& segments) {
  std::string out;
  for (const auto& s : segments)
    if (s.type == k_pt_interp && s.offset <= b.size() && s.filesz <= b.size() - s.offset)
      if (const auto str = b.cstr(s.offset, s.offset + s.filesz)) out = *str;
  return out;
}

// The section header table, named through e_shstrndx. Optional: stripped or hostile files
// may lack it, and ld.so does not use it. A name outside the string table stays "".
util::Result<std::vector<Section>> read_sections(const Reader& r, const Header& h) {
  std::vector<Section> out;
  if (h.shnum == 0 || h.shoff == 0) return out;
  auto& b = r.b;
  // shnum may come from a 64-bit sh_size: compare by division so the size cannot overflow.
  if (h.shnum > b.size() / h.shentsize) return fail("truncated section header table");
  const auto table = b.range(h.shoff, h.shnum * h.shentsize);
  if (!table) return fail("truncated section header table");
  const auto addr = [&](std::uint64_t o) { return r.is64 ? *table->u64(o) : *table->u32(o); };
  std::vector<std::uint32_t> name_offsets;
  for (std::uint64_t i = 0; i < h.shnum; ++i) {
    const auto o = i * h.shentsize;
    Section s;
    name_offsets.push_back(*table->u32(o));
    s.type = *table->u32(o + 4);
    s.addr = addr(r.is64 ? o + 16 : o + 12);
    s.offset = addr(r.is64 ? o + 24 : o + 16);
    s.size = addr(r.is64 ? o + 32 : o + 20);
    out.push_back(s);
  }
  if (h.shstrndx < out.size()) {
    const auto& strs = out[h.shstrndx];
    if (strs.offset <= b.size() && strs.size <= b.size() - strs.offset)
      for (std::size_t i = 0; i < out.size(); ++i)
        if (const auto n = b.cstr(strs.offset + name_offsets[i], strs.offset + strs.size)) out[i].name = *n;
  }
  return out;
}

// PT_DYNAMIC read as ld.so reads it: the entries up to DT_NULL, and the string table they
// name (DT_STRTAB, DT_STRSZ) found through the PT_LOAD segments.
struct Dynamic {
  std::vector<std::pair<std::int64_t, std::uint64_t>> entries;  // tag, value; DT_NULL excluded
  Source* source = nullptr;
  std::uint64_t strings = 0, strings_end = 0;  // the string table's file offsets

  std::optional<std::uint64_t> find(std::int64_t tag) const {
    std::optional<std::uint64_t> v;
    for (const auto& [t, val] : entries)
      if (t == tag) v = val;  // the last one wins, as in ld.so's l_info
    return v;
  }
  util::Result<std::string> str(std::uint64_t off) const {
    const auto s = off < strings_end - strings ? source->cstr(strings + off, strings_end) : std::nullopt;
    if (!s) return fail(fmt::format("dynamic string offset {} outside the string table", off));
    return std::string(*s);
  }
};

util::Result<Dynamic> read_dynamic(const Reader& r, const Segment& dyn, const std::vector<Segment>& segments) {
  auto& b = r.b;
  const std::size_t entsize = r.is64 ? 16 : 8;
  if (dyn.offset > b.size() || dyn.filesz > b.size() - dyn.offset) return fail("truncated dynamic section");
  Dynamic d;
  d.source = &b;
  // Entry by entry up to DT_NULL, so a segment that claims the whole file is not read whole.
  for (std::uint64_t o = dyn.offset; o + entsize <= dyn.offset + dyn.filesz && d.entries.size() < k_max_entries;
       o += entsize) {
    const auto e = b.range(o, entsize);
    if (!e) return fail("truncated dynamic section");
    const auto tag = static_cast<std::int64_t>(r.is64 ? *e->u64(0) : static_cast<std::int32_t>(*e->u32(0)));
    const auto val = r.is64 ? *e->u64(8) : *e->u32(4);
    if (tag == k_dt_null) break;
    d.entries.emplace_back(tag, val);
  }
  const auto strtab = d.find(k_dt_strtab), strsz = d.find(k_dt_strsz);
  if (!strtab || !strsz) return fail("dynamic section without a string table (DT_STRTAB, DT_STRSZ)");
  const auto str_off = vaddr_to_offset(segments, *strtab);
  if (!str_off) return fail(fmt::format("DT_STRTAB 0x{:x} is in no loaded segment", *strtab));
  if (*str_off > b.size() || *strsz > b.size() - *str_off) return fail("truncated dynamic string table");
  d.strings = *str_off;
  d.strings_end = *str_off + *strsz;
  return d;
}

// DT_NEEDED (in order), DT_SONAME, DT_RPATH, DT_RUNPATH and DT_FLAGS_1 into the model.
std::optional<util::Error> read_names(const Dynamic& d, ElfFile& f) {
  f.flags_1 = d.find(k_dt_flags_1).value_or(0);
  for (const auto& [tag, val] : d.entries) {
    if (tag != k_dt_needed && tag != k_dt_soname && tag != k_dt_rpath && tag != k_dt_runpath) continue;
    auto s = d.str(val);
    if (!s) return fail(s.error());
    if (tag == k_dt_needed) f.needed.push_back(*s);
    if (tag == k_dt_soname) f.soname = *s;
    if (tag == k_dt_rpath) f.rpath = *s;
    if (tag == k_dt_runpath) f.runpath = *s;
  }
  return std::nullopt;
}

// .gnu.version_r: Elf_Verneed {u16 version, u16 cnt, u32 file, u32 aux, u32 next} and
// Elf_Vernaux {u32 hash, u16 flags, u16 other, u32 name, u32 next}; same in both classes.
util::Result<std::vector<VersionNeed>> read_verneed(Source& b, const Dynamic& d, const std::vector<Segment>& segments) {
  std::vector<VersionNeed> out;
  const auto verneed = d.find(k_dt_verneed), verneednum = d.find(k_dt_verneednum);
  if (!verneed || !verneednum) return out;
  auto off = vaddr_to_offset(segments, *verneed);
  if (!off) return fail("DT_VERNEED is in no loaded segment");
  for (std::uint64_t i = 0; i < *verneednum && i < 4096; ++i) {
    const auto cnt = b.u16(*off + 2);
    const auto file = b.u32(*off + 4);
    const auto aux = b.u32(*off + 8);
    const auto next = b.u32(*off + 12);
    if (!cnt || !file || !aux || !next) return fail("truncated version needs (.gnu.version_r)");
    auto fname = d.str(*file);
    if (!fname) return fail(fname.error());
    VersionNeed need{*fname, {}};
    auto a = *off + *aux;
    for (std::uint32_t k = 0; k < *cnt && k < 4096; ++k) {
      const auto name = b.u32(a + 8);
      const auto anext = b.u32(a + 12);
      if (!name || !anext) return fail("truncated version need entry");
      auto vname = d.str(*name);
      if (!vname) return fail(vname.error());
      need.versions.push_back(*vname);
      if (*anext == 0) break;
      a += *anext;
    }
    out.push_back(std::move(need));
    if (*next == 0) break;
    *off += *next;
  }
  return out;
}

// .gnu.version_d: Elf_Verdef {u16 version, u16 flags, u16 ndx, u16 cnt, u32 hash, u32 aux,
// u32 next}; the first Elf_Verdaux {u32 name, u32 next} names the version. VER_FLG_BASE
// (1) marks the file's own name, not a version.
util::Result<std::vector<std::string>> read_verdef(Source& b, const Dynamic& d, const std::vector<Segment>& segments) {
  std::vector<std::string> out;
  const auto verdef = d.find(k_dt_verdef), verdefnum = d.find(k_dt_verdefnum);
  if (!verdef || !verdefnum) return out;
  auto off = vaddr_to_offset(segments, *verdef);
  if (!off) return fail("DT_VERDEF is in no loaded segment");
  for (std::uint64_t i = 0; i < *verdefnum && i < 65536; ++i) {
    const auto flags = b.u16(*off + 2);
    const auto aux = b.u32(*off + 12);
    const auto next = b.u32(*off + 16);
    if (!flags || !aux || !next) return fail("truncated version definitions (.gnu.version_d)");
    const auto name = b.u32(*off + *aux);
    if (!name) return fail("truncated version definition entry");
    auto vname = d.str(*name);
    if (!vname) return fail(vname.error());
    if (!(*flags & 1)) out.push_back(*vname);
    if (*next == 0) break;
    *off += *next;
  }
  return out;
}

}  // namespace

const Section* ElfFile::section(std::string_view name) const {
  for (const auto& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

std::string machine_name(std::uint16_t machine) {
  switch (machine) {
    case 3:
      return "i386";
    case 62:
      return "x86-64";
    case 183:
      return "aarch64";
    case 21:
      return "ppc64";
    case 40:
      return "arm";
    case 190:
      return "cuda";
    default:
      return fmt::format("machine {}", machine);
  }
}

namespace {

util::Result<ElfFile> parse_source(Source& source, Headers headers) {
  const auto size = source.size();
  if (size < 16) return fail(fmt::format("not an ELF file: {} bytes", size));
  const auto ident = source.range(0, 16);
  if (!ident) return fail(source.error());
  const auto* data = ident->data();
  if (data[0] != 0x7f || data[1] != 'E' || data[2] != 'L' || data[3] != 'F')
    return fail(fmt::format("not an ELF file (magic {:02x} {:02x} {:02x} {:02x})", data[0], data[1], data[2], data[3]));
  if (data[4] != 1 && data[4] != 2) return fail(fmt::format("unknown ELF class {}", data[4]));
  if (data[5] != 1 && data[5] != 2) return fail(fmt::format("unknown ELF data encoding {}", data[5]));
  ElfFile f;
  f.is_64 = data[4] == 2;
  f.big_endian = data[5] == 2;
  source.set_big_endian(f.big_endian);
  const Reader r{source, f.is_64};

  const auto header = read_header(r, f);
  if (!header) return fail(header.error());
  auto segments = read_segments(r, *header);
  if (!segments) return fail(segments.error());
  f.segments = std::move(*segments);
  f.interpreter = read_interpreter(r.b, f.segments);
  if (headers == Headers::all) {
    auto sections = read_sections(r, *header);
    if (!sections) return fail(sections.error());
    f.sections = std::move(*sections);
  }

  const Segment* dyn = nullptr;
  for (const auto& s : f.segments)
    if (s.type == k_pt_dynamic) dyn = &s;
  if (!dyn) return f;
  f.has_dynamic = true;
  const auto dynamic = read_dynamic(r, *dyn, f.segments);
  if (!dynamic) return fail(dynamic.error());
  if (auto e = read_names(*dynamic, f)) return *e;
  auto needs = read_verneed(r.b, *dynamic, f.segments);
  if (!needs) return fail(needs.error());
  f.version_needs = std::move(*needs);
  auto defs = read_verdef(r.b, *dynamic, f.segments);
  if (!defs) return fail(defs.error());
  f.version_defs = std::move(*defs);
  return f;
}

}  // namespace

util::Result<ElfFile> parse_elf(Source& source, Headers headers) {
  auto f = parse_source(source, headers);
  // A read that failed reads as a truncated table; the failure is the better reason.
  if (!source.error().empty()) return fail(source.error());
  return f;
}

util::Result<ElfFile> parse_elf(const unsigned char* data, std::size_t size, Headers headers) {
  MemorySource source(data, size);
  return parse_elf(source, headers);
}

util::Result<ElfFile> parse_elf(std::uint64_t size, const ReadAt& read, Headers headers) {
  ReadSource source(size, read);
  return parse_elf(source, headers);
}

}  // namespace cudoctor::elf
