#include "cudoctor/elf/fatbin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace cudoctor::elf {
namespace {

// Layout (reverse-engineered by the community; checked here against nvcc 13 output):
// container header {u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 payload_size};
// entry header {u16 kind (1 PTX, 2 cubin), u16, u32 header_size, u64 payload_size,
// u32 compressed_size, u32, u16 minor, u16 major, u32 arch, u32 name_offset, u32 name_size,
// u64 flags, u64, u64 decompressed_size}.
constexpr std::uint32_t k_magic = 0xBA55ED50;
constexpr std::uint64_t k_flag_compressed_lz4 = 0x2000;
constexpr std::uint64_t k_flag_compressed = 0x8000;
constexpr std::uint64_t k_flag_arch_specific = 0x100000;  // sm_90a
constexpr std::uint64_t k_flag_family = 0x200000;         // sm_100f

}  // namespace

std::string FatbinEntry::name() const {
  const char* prefix = kind == Kind::cubin ? "sm_" : kind == Kind::ptx ? "compute_" : "kind?_";
  return fmt::format("{}{}{}", prefix, arch, suffix);
}

namespace {
std::vector<std::string> names(const Fatbin& f, FatbinEntry::Kind kind) {
  std::vector<const FatbinEntry*> es;
  for (const auto& e : f.entries)
    if (e.kind == kind) es.push_back(&e);
  std::sort(es.begin(), es.end(),
            [](auto* a, auto* b) { return std::tie(a->arch, a->suffix) < std::tie(b->arch, b->suffix); });
  std::vector<std::string> out;
  for (const auto* e : es)
    if (out.empty() || out.back() != e->name()) out.push_back(e->name());
  return out;
}
}  // namespace

std::vector<std::string> Fatbin::sm_archs() const {
  return names(*this, FatbinEntry::Kind::cubin);
}
std::vector<std::string> Fatbin::ptx_archs() const {
  return names(*this, FatbinEntry::Kind::ptx);
}

util::Result<Fatbin> parse_fatbin(const unsigned char* data, std::size_t size) {
  const Bytes b(data, size);
  Fatbin fb;
  std::uint64_t o = 0;
  while (o + 16 <= size) {
    const auto magic = *b.u32(o);
    if (magic != k_magic) {
      // Containers are 8-byte aligned with zero padding between them.
      if (magic == 0) {
        o += 8;
        continue;
      }
      return util::error(fmt::format("no fatbin container at offset 0x{:x} (found 0x{:08x})", o, magic));
    }
    const auto header_size = *b.u16(o + 6);
    const auto payload = *b.u64(o + 8);
    if (header_size < 16)
      return util::error(fmt::format("fatbin container at 0x{:x} has a {}-byte header", o, header_size));
    if (!b.contains(o + header_size, payload))
      return util::error(fmt::format("fatbin container at 0x{:x} runs past the end ({} bytes)", o, payload));
    ++fb.containers;
    auto e = o + header_size;
    const auto end = e + payload;
    while (e < end) {
      if (!b.contains(e, 64) || e + 64 > end) return util::error(fmt::format("truncated fatbin entry at 0x{:x}", e));
      FatbinEntry entry;
      entry.raw_kind = *b.u16(e);
      entry.kind = entry.raw_kind == 2   ? FatbinEntry::Kind::cubin
                   : entry.raw_kind == 1 ? FatbinEntry::Kind::ptx
                                         : FatbinEntry::Kind::other;
      const auto ehs = *b.u32(e + 4);
      entry.size = *b.u64(e + 8);
      entry.arch = static_cast<int>(*b.u32(e + 28));
      const auto flags = *b.u64(e + 40);
      entry.compressed = (flags & (k_flag_compressed | k_flag_compressed_lz4)) != 0;
      entry.suffix = (flags & k_flag_arch_specific) ? "a" : (flags & k_flag_family) ? "f" : "";
      if (ehs < 64 || entry.size > end - e || ehs > end - e - entry.size)
        return util::error(fmt::format("fatbin entry at 0x{:x} runs past its container", e));
      fb.entries.push_back(entry);
      e += ehs + entry.size;
    }
    o = end;
  }
  return fb;
}

util::Result<std::optional<Fatbin>> read_fatbin(const ElfFile& elf, const unsigned char* data, std::size_t size) {
  const auto* s = elf.section(".nv_fatbin");
  if (!s) return std::optional<Fatbin>();
  if (s->offset > size || s->size > size - s->offset)
    return util::error(fmt::format(".nv_fatbin (offset 0x{:x}, {} bytes) lies outside the file", s->offset, s->size));
  auto fb = parse_fatbin(data + s->offset, static_cast<std::size_t>(s->size));
  if (!fb) return util::error(".nv_fatbin: " + fb.error());
  return std::optional<Fatbin>(std::move(fb).value());
}

std::vector<compat::Target> targets(const Fatbin& fb) {
  std::vector<compat::Target> out;
  for (const auto& e : fb.entries) {
    if (e.kind == FatbinEntry::Kind::other || e.arch <= 0) continue;
    compat::Target t{e.kind == FatbinEntry::Kind::cubin ? compat::Target::Kind::cubin : compat::Target::Kind::ptx,
                     e.arch / 10, e.arch % 10,
                     e.suffix == "a"   ? 'a'
                     : e.suffix == "f" ? 'f'
                                       : '\0'};
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

compat::Verdict can_run(const Fatbin& fb, const util::Version& cc) {
  const auto t = targets(fb);
  return compat::runs_on(t, cc);
}

}  // namespace cudoctor::elf
