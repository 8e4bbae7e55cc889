#include "cudoctor/elf/elf_file.hpp"

#include <fmt/format.h>

namespace cudoctor::elf {
namespace {

// gABI constants.
constexpr std::uint32_t k_pt_load = 1, k_pt_dynamic = 2, k_pt_interp = 3;
constexpr std::int64_t k_dt_null = 0, k_dt_needed = 1, k_dt_strtab = 5, k_dt_strsz = 10, k_dt_soname = 14,
                       k_dt_rpath = 15, k_dt_runpath = 29, k_dt_flags_1 = 0x6ffffffb, k_dt_verdef = 0x6ffffffc,
                       k_dt_verdefnum = 0x6ffffffd, k_dt_verneed = 0x6ffffffe, k_dt_verneednum = 0x6fffffff;
constexpr std::size_t k_max_entries = 1 << 20;  // no honest file has more; bounds loops on garbage

struct Reader {
  Bytes b;
  bool is64;
  // Reads an address-sized field.
  std::optional<std::uint64_t> addr(std::uint64_t off) const {
    if (is64) return b.u64(off);
    const auto v = b.u32(off);
    return v ? std::optional<std::uint64_t>(*v) : std::nullopt;
  }
};

// The file offset of a virtual address, through the PT_LOAD that maps it (as ld.so does).
std::optional<std::uint64_t> vaddr_to_offset(const ElfFile& f, std::uint64_t vaddr) {
  for (const auto& s : f.segments)
    if (s.type == k_pt_load && vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return s.offset + (vaddr - s.vaddr);
  return std::nullopt;
}

util::Error fail(const std::string& what) {
  return util::error(what);
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

util::Result<ElfFile> parse_elf(const unsigned char* data, std::size_t size) {
  Bytes b(data, size);
  if (size < 16) return fail(fmt::format("not an ELF file: {} bytes", size));
  if (data[0] != 0x7f || data[1] != 'E' || data[2] != 'L' || data[3] != 'F')
    return fail(fmt::format("not an ELF file (magic {:02x} {:02x} {:02x} {:02x})", data[0], data[1], data[2], data[3]));
  ElfFile f;
  if (data[4] != 1 && data[4] != 2) return fail(fmt::format("unknown ELF class {}", data[4]));
  if (data[5] != 1 && data[5] != 2) return fail(fmt::format("unknown ELF data encoding {}", data[5]));
  f.is_64 = data[4] == 2;
  f.big_endian = data[5] == 2;
  b.set_big_endian(f.big_endian);
  const Reader r{b, f.is_64};
  const std::size_t ehsize = f.is_64 ? 64 : 52;
  if (size < ehsize) return fail("truncated ELF header");
  f.type = *b.u16(16);
  f.machine = *b.u16(18);
  const auto phoff = *r.addr(f.is_64 ? 32 : 28);
  const auto shoff = *r.addr(f.is_64 ? 40 : 32);
  const auto phentsize = *b.u16(f.is_64 ? 54 : 42);
  const auto phnum = *b.u16(f.is_64 ? 56 : 44);
  const auto shentsize = *b.u16(f.is_64 ? 58 : 46);
  const auto shnum = *b.u16(f.is_64 ? 60 : 48);
  const auto shstrndx = *b.u16(f.is_64 ? 62 : 50);

  // Program headers.
  if (phnum > 0) {
    if (phentsize < (f.is_64 ? 56u : 32u)) return fail(fmt::format("program header entries of {} bytes", phentsize));
    if (!b.contains(phoff, static_cast<std::uint64_t>(phnum) * phentsize))
      return fail("truncated program header table");
    for (std::uint32_t i = 0; i < phnum; ++i) {
      const auto o = phoff + static_cast<std::uint64_t>(i) * phentsize;
      Segment s;
      s.type = *b.u32(o);
      if (f.is_64) {
        s.offset = *b.u64(o + 8);
        s.vaddr = *b.u64(o + 16);
        s.filesz = *b.u64(o + 32);
        s.memsz = *b.u64(o + 40);
      } else {
        s.offset = *b.u32(o + 4);
        s.vaddr = *b.u32(o + 8);
        s.filesz = *b.u32(o + 16);
        s.memsz = *b.u32(o + 20);
      }
      f.segments.push_back(s);
    }
  }
  for (const auto& s : f.segments)
    if (s.type == k_pt_interp)
      if (const auto in = b.slice(s.offset, s.filesz))
        if (const auto str = in->cstr(0)) f.interpreter = *str;

  // Section headers (optional: stripped or hostile files may lack them; ld.so does not use them).
  if (shnum > 0 && shoff != 0) {
    if (shentsize < (f.is_64 ? 64u : 40u)) return fail(fmt::format("section header entries of {} bytes", shentsize));
    if (!b.contains(shoff, static_cast<std::uint64_t>(shnum) * shentsize))
      return fail("truncated section header table");
    std::vector<std::uint32_t> name_offsets;
    for (std::uint32_t i = 0; i < shnum; ++i) {
      const auto o = shoff + static_cast<std::uint64_t>(i) * shentsize;
      Section s;
      name_offsets.push_back(*b.u32(o));
      s.type = *b.u32(o + 4);
      s.addr = *r.addr(f.is_64 ? o + 16 : o + 12);
      s.offset = *r.addr(f.is_64 ? o + 24 : o + 16);
      s.size = *r.addr(f.is_64 ? o + 32 : o + 20);
      f.sections.push_back(s);
    }
    if (shstrndx < f.sections.size()) {
      const auto& strs = f.sections[shstrndx];
      if (const auto tab = b.slice(strs.offset, strs.size))
        for (std::size_t i = 0; i < f.sections.size(); ++i)
          if (const auto n = tab->cstr(name_offsets[i])) f.sections[i].name = *n;
    }
  }

  // The dynamic segment, read as ld.so reads it.
  const Segment* dyn = nullptr;
  for (const auto& s : f.segments)
    if (s.type == k_pt_dynamic) dyn = &s;
  if (!dyn) return f;
  f.has_dynamic = true;
  const std::size_t entsize = f.is_64 ? 16 : 8;
  if (!b.contains(dyn->offset, dyn->filesz)) return fail("truncated dynamic section");
  std::vector<std::pair<std::int64_t, std::uint64_t>> entries;
  for (std::uint64_t o = dyn->offset; o + entsize <= dyn->offset + dyn->filesz && entries.size() < k_max_entries;
       o += entsize) {
    const auto tag = static_cast<std::int64_t>(f.is_64 ? *b.u64(o) : static_cast<std::int32_t>(*b.u32(o)));
    const auto val = *r.addr(o + (f.is_64 ? 8 : 4));
    if (tag == k_dt_null) break;
    entries.emplace_back(tag, val);
  }
  std::optional<std::uint64_t> strtab, strsz, verneed, verneednum, verdef, verdefnum;
  for (const auto& [tag, val] : entries) {
    if (tag == k_dt_strtab) strtab = val;
    if (tag == k_dt_strsz) strsz = val;
    if (tag == k_dt_flags_1) f.flags_1 = val;
    if (tag == k_dt_verneed) verneed = val;
    if (tag == k_dt_verneednum) verneednum = val;
    if (tag == k_dt_verdef) verdef = val;
    if (tag == k_dt_verdefnum) verdefnum = val;
  }
  if (!strtab || !strsz) return fail("dynamic section without a string table (DT_STRTAB, DT_STRSZ)");
  const auto str_off = vaddr_to_offset(f, *strtab);
  if (!str_off) return fail(fmt::format("DT_STRTAB 0x{:x} is in no loaded segment", *strtab));
  const auto strs = b.slice(*str_off, *strsz);
  if (!strs) return fail("truncated dynamic string table");
  const auto str = [&](std::uint64_t off) -> util::Result<std::string> {
    const auto s = strs->cstr(off);
    if (!s) return fail(fmt::format("dynamic string offset {} outside the string table", off));
    return std::string(*s);
  };
  for (const auto& [tag, val] : entries) {
    if (tag != k_dt_needed && tag != k_dt_soname && tag != k_dt_rpath && tag != k_dt_runpath) continue;
    auto s = str(val);
    if (!s) return fail(s.error());
    if (tag == k_dt_needed) f.needed.push_back(*s);
    if (tag == k_dt_soname) f.soname = *s;
    if (tag == k_dt_rpath) f.rpath = *s;
    if (tag == k_dt_runpath) f.runpath = *s;
  }

  // .gnu.version_r: Elf_Verneed {u16 version, u16 cnt, u32 file, u32 aux, u32 next} and
  // Elf_Vernaux {u32 hash, u16 flags, u16 other, u32 name, u32 next}; same in both classes.
  if (verneed && verneednum) {
    auto off = vaddr_to_offset(f, *verneed);
    if (!off) return fail("DT_VERNEED is in no loaded segment");
    for (std::uint64_t i = 0; i < *verneednum && i < 4096; ++i) {
      const auto cnt = b.u16(*off + 2);
      const auto file = b.u32(*off + 4);
      const auto aux = b.u32(*off + 8);
      const auto next = b.u32(*off + 12);
      if (!cnt || !file || !aux || !next) return fail("truncated version needs (.gnu.version_r)");
      auto fname = str(*file);
      if (!fname) return fail(fname.error());
      VersionNeed need{*fname, {}};
      auto a = *off + *aux;
      for (std::uint32_t k = 0; k < *cnt && k < 4096; ++k) {
        const auto name = b.u32(a + 8);
        const auto anext = b.u32(a + 12);
        if (!name || !anext) return fail("truncated version need entry");
        auto vname = str(*name);
        if (!vname) return fail(vname.error());
        need.versions.push_back(*vname);
        if (*anext == 0) break;
        a += *anext;
      }
      f.version_needs.push_back(std::move(need));
      if (*next == 0) break;
      *off += *next;
    }
  }
  // .gnu.version_d: Elf_Verdef {u16 version, u16 flags, u16 ndx, u16 cnt, u32 hash, u32 aux,
  // u32 next}; the first Elf_Verdaux {u32 name, u32 next} names the version. VER_FLG_BASE
  // (1) marks the file's own name, not a version.
  if (verdef && verdefnum) {
    auto off = vaddr_to_offset(f, *verdef);
    if (!off) return fail("DT_VERDEF is in no loaded segment");
    for (std::uint64_t i = 0; i < *verdefnum && i < 65536; ++i) {
      const auto flags = b.u16(*off + 2);
      const auto aux = b.u32(*off + 12);
      const auto next = b.u32(*off + 16);
      if (!flags || !aux || !next) return fail("truncated version definitions (.gnu.version_d)");
      const auto name = b.u32(*off + *aux);
      if (!name) return fail("truncated version definition entry");
      auto vname = str(*name);
      if (!vname) return fail(vname.error());
      if (!(*flags & 1)) f.version_defs.push_back(*vname);
      if (*next == 0) break;
      *off += *next;
    }
  }
  return f;
}

}  // namespace cudoctor::elf
