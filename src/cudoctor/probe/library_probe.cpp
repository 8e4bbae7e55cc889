#include <fmt/format.h>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

// Until the exact resolver (ld/, issue #3) lands, this follows the loader's search order
// over directories: LD_LIBRARY_PATH, the directories ld.so.conf names (which is what
// ldconfig puts in /etc/ld.so.cache), then the default directories.

namespace cudoctor::probe {
namespace {

struct SearchDir {
  std::string dir;
  std::string found_by;
};

// A glob with '*' only in the last component, as ld.so.conf's include lines use.
std::vector<std::string> expand_include(const sys::Sys& sys, const std::string& pattern) {
  const auto dir = sys::dirname(pattern);
  const auto base = sys::basename(pattern);
  const auto star = base.find('*');
  if (star == std::string::npos) return {pattern};
  const auto prefix = base.substr(0, star);
  const auto suffix = base.substr(star + 1);
  std::vector<std::string> out;
  if (const auto names = sys.list_dir(dir))
    for (const auto& n : *names)
      if (n.size() >= prefix.size() + suffix.size() && n.starts_with(prefix) && n.ends_with(suffix))
        out.push_back(sys::join(dir, n));
  return out;
}

void read_ld_so_conf(Context& ctx, const std::string& path, int depth, std::vector<SearchDir>& out) {
  if (depth > 8) return;  // include loops
  const auto text = ctx.read_optional(path, 1 << 20);
  if (!text) return;
  for (const auto raw : util::lines(*text)) {
    auto line = util::trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const auto words = util::split_ws(line);
    if (words[0] == "include") {
      for (std::size_t i = 1; i < words.size(); ++i)
        for (const auto& f : expand_include(ctx.sys(), sys::join(sys::dirname(path), words[i])))
          read_ld_so_conf(ctx, f, depth + 1, out);
      continue;
    }
    if (words[0] == "hwcap") continue;
    out.push_back({sys::normalize(words[0]), fmt::format("ld.so.conf: {}", path)});
  }
}

std::string multiarch_triplet(const std::string& arch) {
  if (arch == "x86_64") return "x86_64-linux-gnu";
  if (arch == "aarch64") return "aarch64-linux-gnu";
  if (arch == "ppc64le") return "powerpc64le-linux-gnu";
  return "";
}

snapshot::DriverLibrary find_library(const sys::Sys& sys, const std::string& soname, const std::vector<SearchDir>& dirs) {
  snapshot::DriverLibrary lib;
  lib.soname = soname;
  for (const auto& d : dirs) {
    const auto candidate = sys::join(d.dir, soname);
    if (sys.stat(candidate).type != sys::FileType::regular) {
      lib.searched.push_back(d.dir);
      continue;
    }
    lib.path = candidate;
    lib.found_by = d.found_by;
    lib.real_path = sys.canonical(candidate).value_or(candidate);
    // NVIDIA names the real file after the driver version: libcuda.so.535.104.05.
    const auto stem = soname.substr(0, soname.find(".so") + 4);  // "libcuda.so."
    const auto real = sys::basename(lib.real_path);
    if (real.starts_with(stem)) {
      const auto v = real.substr(stem.size());
      if (const auto parsed = util::Version::parse(v); parsed && parsed->parts.size() >= 2) lib.version = v;
    }
    return lib;
  }
  return lib;
}

}  // namespace

std::vector<snapshot::DriverLibrary> probe_driver_libraries(Context& ctx, const snapshot::HostFacts& host) {
  const auto& sys = ctx.sys();
  std::vector<SearchDir> dirs;
  if (const auto llp = sys.env("LD_LIBRARY_PATH"))
    for (const auto d : util::split(*llp, ':'))
      if (!d.empty()) dirs.push_back({sys::normalize(d), "LD_LIBRARY_PATH"});
  read_ld_so_conf(ctx, "/etc/ld.so.conf", 0, dirs);
  const auto triplet = multiarch_triplet(host.arch.empty() ? "x86_64" : host.arch);
  std::vector<std::string> defaults;
  if (!triplet.empty()) {
    defaults.push_back("/lib/" + triplet);
    defaults.push_back("/usr/lib/" + triplet);
  }
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) defaults.emplace_back(d);
  for (const auto& d : defaults) dirs.push_back({d, "default directory"});
  // A directory that appears twice is searched once, at its first place.
  std::vector<SearchDir> unique;
  for (const auto& d : dirs) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || u.dir == d.dir;
    if (!seen) unique.push_back(d);
  }
  return {find_library(sys, "libcuda.so.1", unique), find_library(sys, "libnvidia-ml.so.1", unique)};
}

}  // namespace cudoctor::probe
