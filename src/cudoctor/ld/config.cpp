#include <algorithm>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::ld {
namespace {

// The newest GLIBC_2.x version libc.so.6 defines: glibc's own version.
std::string glibc_version(const sys::Sys& sys, const std::string& libc) {
  const auto blob = sys.map_file(libc);
  if (!blob) return "";
  const auto elf = elf::parse_elf((*blob)->data(), (*blob)->size());
  if (!elf) return "";
  std::optional<util::Version> best;
  for (const auto& v : elf->version_defs)
    if (v.starts_with("GLIBC_2."))
      if (const auto p = util::Version::parse(v.substr(6)); p && (!best || *p > *best)) best = p;
  return best ? best->str() : "";
}

// x86-64 micro-architecture levels (the x86-64 psABI) the CPU supports, best first, as
// glibc-hwcaps subdirectory names.
std::vector<std::string> x86_levels(const sys::Sys& sys) {
  const auto cpuinfo = sys.read_file("/proc/cpuinfo", 8 << 20);
  if (!cpuinfo) return {};
  std::vector<std::string_view> flags;
  for (const auto line : util::lines(*cpuinfo))
    if (line.starts_with("flags")) {
      flags = util::split_ws(line);
      break;
    }
  const auto has = [&](std::initializer_list<std::string_view> want) {
    return std::all_of(want.begin(), want.end(),
                       [&](std::string_view w) { return std::find(flags.begin(), flags.end(), w) != flags.end(); });
  };
  std::vector<std::string> out;
  const bool v2 = has({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"});
  const bool v3 = v2 && has({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"});
  const bool v4 = v3 && has({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"});
  if (v4) out.emplace_back("glibc-hwcaps/x86-64-v4");
  if (v3) out.emplace_back("glibc-hwcaps/x86-64-v3");
  if (v2) out.emplace_back("glibc-hwcaps/x86-64-v2");
  return out;
}

}  // namespace

Config discover_config(const sys::Sys& sys, const std::string& ld_library_path) {
  Config c;
  for (const auto d : util::split(ld_library_path, ':'))
    if (!d.empty()) c.ld_library_path.emplace_back(d);
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
  c.hwcaps_subdirs = x86_levels(sys);
  // glibc 2.37 removed the legacy hwcap subdirectories (tls, the platform, hwcap names);
  // before it, ld.so tries them in this order on x86-64 (LD_DEBUG=libs shows it).
  const auto v = util::Version::parse(c.glibc_version);
  if (!v || *v < *util::Version::parse("2.37"))
    c.legacy_subdirs = {"tls/x86_64/x86_64", "tls/x86_64", "tls", "x86_64/x86_64", "x86_64"};
  return c;
}

}  // namespace cudoctor::ld
