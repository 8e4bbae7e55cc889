#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/elf/note.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

// Found as the dynamic loader would find them when a program dlopens them: through ld/,
// which reads /etc/ld.so.cache itself.

namespace cudoctor::probe {
namespace {

// Where NVIDIA's installers, the distributions' driver packages, the container toolkit and
// WSL put the user-space driver; ld.so.conf's directories are added to these.
constexpr const char* k_driver_dirs[] = {"/usr/lib/x86_64-linux-gnu",
                                         "/usr/lib/x86_64-linux-gnu/nvidia/current",
                                         "/usr/lib64",
                                         "/usr/lib",
                                         "/usr/local/nvidia/lib64",
                                         "/usr/lib/wsl/lib",
                                         "/usr/lib/aarch64-linux-gnu"};

// ld.so.conf files read (includes followed) and the depth of includes, so a tree whose
// configuration includes itself or thousands of files ends.
constexpr std::size_t k_max_conf_files = 256;
constexpr int k_max_include_depth = 4;

// A shell wildcard of '*' and '?' (glob(3) as ldconfig uses it, without brackets).
bool wildcard(std::string_view pattern, std::string_view name) {
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The directories /etc/ld.so.conf names, with its "include" lines followed as ldconfig's
// parse_conf does (elf/ldconfig.c): a relative pattern is taken from the including file's
// directory, a wildcard only in the last component; "hwcap" lines are skipped and the
// libc5-era "dir=TYPE" suffix dropped.
void conf_dirs(Context& ctx, const std::string& file, int depth, std::size_t& files, std::vector<std::string>& out) {
  if (depth > k_max_include_depth || ++files > k_max_conf_files) return;
  const auto text = ctx.read_optional(file, 1 << 20);
  if (!text) return;
  for (const auto raw : util::lines(*text)) {
    const auto line = util::trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const auto words = util::split_ws(line);
    if (words[0] == "hwcap") continue;
    if (words[0] == "include") {
      for (std::size_t i = 1; i < words.size(); ++i) {
        const auto pattern = sys::join(sys::dirname(file), words[i]);
        const auto dir = sys::dirname(pattern);
        const auto base = sys::basename(pattern);
        if (base.find_first_of("*?") == std::string::npos) {
          conf_dirs(ctx, pattern, depth + 1, files, out);
          continue;
        }
        if (const auto names = ctx.list_optional(dir))
          for (const auto& n : *names)
            if (wildcard(base, n)) conf_dirs(ctx, sys::join(dir, n), depth + 1, files, out);
      }
      continue;
    }
    const auto dir = std::string(line.substr(0, line.find('=')));
    if (!dir.empty() && dir.front() == '/') out.push_back(sys::normalize(dir));
  }
}

// The loader's reason for passing over path, if it did. The cache may name the file by
// another of its paths (/lib for /usr/lib).
const ld::Rejected* passed_over(const sys::Sys& sys, const std::vector<ld::Rejected>& rejected,
                                const std::string& path) {
  const auto real = sys.canonical(path).value_or(path);
  for (const auto& r : rejected)
    if (r.path == path || sys.canonical(r.path).value_or(r.path) == real) return &r;
  return nullptr;
}

// The files and links named soname the loader did not take: in the usual driver directories
// and ld.so.conf's, each directory once (by its canonical path).
std::vector<snapshot::LibraryCandidate> candidates(Context& ctx, const std::string& soname,
                                                   const std::vector<ld::Rejected>& rejected) {
  const auto& sys = ctx.sys();
  std::vector<std::string> dirs(std::begin(k_driver_dirs), std::end(k_driver_dirs));
  std::size_t files = 0;
  conf_dirs(ctx, "/etc/ld.so.conf", 0, files, dirs);
  std::vector<std::string> seen;
  std::vector<snapshot::LibraryCandidate> out;
  for (const auto& d : dirs) {
    const auto real = sys.canonical(d);
    if (!real || std::find(seen.begin(), seen.end(), *real) != seen.end()) continue;
    seen.push_back(*real);
    const auto path = sys::join(d, soname);
    const auto lst = sys.stat(path, false);
    if (lst.type == sys::FileType::missing) continue;
    snapshot::LibraryCandidate c{path, "", "", ""};
    if (sys.stat(path).type == sys::FileType::missing) {
      c.state = "dangling";
      c.target = sys.read_link(path).value_or("");
    } else if (const auto* r = passed_over(sys, rejected, path)) {
      const bool wrong_class = r->why.starts_with("wrong ELF class") || r->why.starts_with("wrong machine");
      c.state = wrong_class ? "wrong_class" : "unusable";
      c.reason = r->why;
    } else {
      c.state = "off_loader_path";
    }
    out.push_back(std::move(c));
  }
  return out;
}

// A libcuda from NVIDIA's cuda-compat package: its .note.cuda.fwd_compatibility ELF note (read
// as nvidia-container-toolkit's enable-cuda-compat hook reads it), else its directory.
std::optional<snapshot::ForwardCompat> forward_compat(Context& ctx, const std::string& real_path) {
  std::optional<snapshot::ForwardCompat> out;
  if (sys::basename(sys::dirname(real_path)) == "compat") out.emplace();
  const auto blob = ctx.map_optional(real_path);
  if (!blob) return out;
  const auto elf = elf::parse_elf(blob->data(), blob->size());
  if (!elf) return out;
  const auto note =
      elf::read_note(*elf, blob->data(), blob->size(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation");
  if (!note || !*note) {
    if (!note) out.emplace().note_error = note.error();
    return out;
  }
  auto& fc = out.emplace();
  const auto j = nlohmann::json::parse(**note, nullptr, false);
  if (!j.is_object()) {
    fc.note_error = "the note is not a JSON object: " + util::printable(**note, 60);
    return out;
  }
  fc.note = true;
  // Go's encoding/json, which the hook uses, matches keys in any case: "CUDA Version", "Driver".
  for (const auto& [key, value] : j.items()) {
    const auto k = util::to_lower(key);
    if (k == "cuda version" && value.is_string()) fc.cuda = value.get<std::string>();
    const bool list = k == "driver" || k == "device";
    if (!list || !value.is_array()) continue;
    for (const auto& n : value)
      if (n.is_number_integer()) (k == "driver" ? fc.drivers : fc.devices).push_back(n.get<int>());
  }
  return out;
}

snapshot::DriverLibrary find_library(Context& ctx, ld::Resolver& resolver, const std::string& soname) {
  const auto& sys = ctx.sys();
  snapshot::DriverLibrary lib;
  lib.soname = soname;
  std::string found;
  const auto lookup = resolver.locate(soname, found);
  lib.searched = lookup.searched;
  for (const auto& r : lookup.rejected) lib.searched.push_back(r.path + " (passed over: " + r.why + ")");
  if (found.empty()) {
    lib.candidates = candidates(ctx, soname, lookup.rejected);
    return lib;
  }
  lib.path = found;
  lib.found_by = ld::to_string(lookup.rule) + (lookup.detail.empty() ? "" : ": " + lookup.detail);
  lib.real_path = sys.canonical(found).value_or(found);
  // NVIDIA names the real file after the driver version: libcuda.so.535.104.05.
  const auto stem = soname.substr(0, soname.find(".so") + 4);  // "libcuda.so."
  const auto real = sys::basename(lib.real_path);
  if (real.starts_with(stem)) {
    const auto v = real.substr(stem.size());
    if (const auto parsed = util::Version::parse(v); parsed && parsed->parts.size() >= 2) lib.version = v;
  }
  if (soname == "libcuda.so.1") lib.forward_compat = forward_compat(ctx, lib.real_path);
  return lib;
}

}  // namespace

std::vector<snapshot::DriverLibrary> probe_driver_libraries(Context& ctx, const snapshot::HostFacts&) {
  auto& resolver = ctx.resolver();
  return {find_library(ctx, resolver, "libcuda.so.1"), find_library(ctx, resolver, "libnvidia-ml.so.1")};
}

void probe_unversioned_libcuda(Context& ctx, snapshot::DriverFacts& driver) {
  const auto& sys = ctx.sys();
  auto& resolver = ctx.resolver();
  driver.libcuda_unversioned = find_library(ctx, resolver, "libcuda.so");
  for (const auto& l : driver.libraries)
    if (l.soname == "libcuda.so.1" && !l.path.empty())
      driver.libcuda_unversioned_beside = sys.exists(sys::join(sys::dirname(l.path), "libcuda.so"));
}

}  // namespace cudoctor::probe
