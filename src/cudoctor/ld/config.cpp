#include <algorithm>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::ld {
namespace {

// The newest GLIBC_2.x version libc.so.6 defines: glibc's own version.
std::string glibc_version(const sys::Sys& sys, const std::string& libc) {
  // Its version definitions are reached through the dynamic segment: a few reads, not the
  // whole 2 MB file mapped and its section headers parsed.
  const auto file = sys.open_reader(libc);
  if (!file) return "";
  const auto elf = read_loader_headers(**file);
  if (!elf) return "";
  std::optional<util::Version> best;
  for (const auto& v : elf->version_defs)
    if (v.starts_with("GLIBC_2."))
      if (const auto p = util::Version::parse(v.substr(6)); p && (!best || *p > *best)) best = p;
  return best ? best->str() : "";
}

// The CPU as /proc/cpuinfo describes its first processor: vendor and flags.
struct Cpu {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD"
  std::vector<std::string> flags;
  bool has(std::initializer_list<std::string_view> want) const {
    return std::all_of(want.begin(), want.end(),
                       [&](std::string_view w) { return std::find(flags.begin(), flags.end(), w) != flags.end(); });
  }
};

Cpu read_cpu(const sys::Sys& sys) {
  Cpu cpu;
  const auto cpuinfo = sys.read_file("/proc/cpuinfo", 8 << 20);
  if (!cpuinfo) return cpu;
  for (const auto line : util::lines(*cpuinfo)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = util::trim(line.substr(0, colon));
    const auto value = util::trim(line.substr(colon + 1));
    if (key == "vendor_id" && cpu.vendor.empty()) cpu.vendor = std::string(value);
    if (key == "flags") {
      for (const auto f : util::split_ws(value)) cpu.flags.emplace_back(f);
      break;
    }
  }
  return cpu;
}

// x86-64 micro-architecture levels (the x86-64 psABI) the CPU supports, best first, as
// glibc-hwcaps subdirectory names.
std::vector<std::string> x86_levels(const Cpu& cpu) {
  std::vector<std::string> out;
  const bool v2 = cpu.has({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"});
  const bool v3 = v2 && cpu.has({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"});
  const bool v4 = v3 && cpu.has({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"});
  if (v4) out.emplace_back("glibc-hwcaps/x86-64-v4");
  if (v3) out.emplace_back("glibc-hwcaps/x86-64-v3");
  if (v2) out.emplace_back("glibc-hwcaps/x86-64-v2");
  return out;
}

// $PLATFORM and the legacy AVX-512 hwcap as glibc's sysdeps/x86/cpu-features.c sets them on
// x86-64: on Intel CPUs only, "xeon_phi" with AVX512ER and AVX512PF; else the avx512_1 hwcap
// with AVX512CD, BW, DQ and VL; and "haswell" (when not xeon_phi) with AVX2, FMA, BMI1, BMI2,
// LZCNT (cpuinfo: abm), MOVBE and POPCNT. Otherwise AT_PLATFORM from the kernel, "x86_64".
std::string x86_platform(const Cpu& cpu, bool& avx512_1) {
  avx512_1 = false;
  if (cpu.vendor != "GenuineIntel") return "x86_64";
  std::string platform;
  if (cpu.has({"avx512cd"})) {
    if (cpu.has({"avx512er"})) {
      if (cpu.has({"avx512pf"})) platform = "xeon_phi";
    } else {
      avx512_1 = cpu.has({"avx512bw", "avx512dq", "avx512vl"});
    }
  }
  if (platform.empty() && cpu.has({"avx2", "fma", "bmi1", "bmi2", "abm", "movbe", "popcnt"})) platform = "haswell";
  return platform.empty() ? "x86_64" : platform;
}

// The legacy hwcap subdirectories ld.so before 2.37 tries in each search directory, best
// first (without the directory itself): "tls/" and then no prefix, over the subsets of
// (platform, avx512_1 when set, x86_64) in glibc's order (elf/dl-hwcaps.c
// _dl_important_hwcaps; LD_DEBUG=libs shows the list).
std::vector<std::string> legacy_subdirs(const std::string& platform, bool avx512_1) {
  std::vector<std::string> parts = {platform};
  if (avx512_1) parts.emplace_back("avx512_1");
  parts.emplace_back("x86_64");
  std::vector<std::string> combos;
  const auto n = parts.size();
  for (std::size_t mask = (std::size_t{1} << n) - 1;; --mask) {
    std::string c;
    for (std::size_t i = 0; i < n; ++i)
      if (mask & (std::size_t{1} << (n - 1 - i))) c += (c.empty() ? "" : "/") + parts[i];
    if (std::find(combos.begin(), combos.end(), c) == combos.end()) combos.push_back(c);
    if (mask == 0) break;
  }
  std::vector<std::string> out;
  for (const auto& c : combos) out.push_back(c.empty() ? "tls" : "tls/" + c);
  for (const auto& c : combos)
    if (!c.empty()) out.push_back(c);
  return out;
}

}  // namespace

Config discover_config(const sys::Sys& sys, const std::string& ld_library_path) {
  Config c;
  // An empty entry of a non-empty LD_LIBRARY_PATH ("/a::/b", a trailing ':') is the current
  // directory: glibc's fillin_rpath (elf/dl-load.c) keeps it as "" and opens names from there.
  if (!ld_library_path.empty())
    for (const auto d : util::split(ld_library_path, ':')) c.ld_library_path.emplace_back(d);
  if (sys.is_live())
    if (const auto cwd = sys.read_link("/proc/self/cwd"); cwd && cwd->starts_with('/')) c.cwd = *cwd;
  // Debian and Ubuntu build glibc with the multiarch layout; others with lib64.
  const bool multiarch = sys.stat("/lib/x86_64-linux-gnu").type == sys::FileType::directory ||
                         sys.stat("/usr/lib/x86_64-linux-gnu").type == sys::FileType::directory;
  std::string libc;
  if (multiarch) {
    c.system_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
    c.lib = "lib/x86_64-linux-gnu";
    libc = "/lib/x86_64-linux-gnu/libc.so.6";
  } else {
    c.system_dirs = {"/lib64", "/usr/lib64"};
    c.lib = "lib64";
    libc = "/lib64/libc.so.6";
  }
  c.glibc_version = glibc_version(sys, libc);
  const auto cpu = read_cpu(sys);
  c.hwcaps_subdirs = x86_levels(cpu);
  bool avx512_1 = false;
  c.platform = x86_platform(cpu, avx512_1);
  // glibc 2.37 removed the legacy hwcap subdirectories (tls, the platform, hwcap names).
  const auto v = util::Version::parse(c.glibc_version);
  if (!v || *v < *util::Version::parse("2.37")) c.legacy_subdirs = legacy_subdirs(c.platform, avx512_1);
  return c;
}

}  // namespace cudoctor::ld
