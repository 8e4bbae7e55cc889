// L2: every CUDA toolkit a user may have, how each was found, its version from every witness,
// its components; and what selects one: PATH, CUDA_HOME, /usr/local/cuda, the loader.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <regex>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::probe {
namespace {

using snapshot::Toolkit;

using snapshot::ToolkitFinder;
using snapshot::ToolkitFoundBy;

bool is_dir(const sys::Sys& sys, const std::string& p) {
  return sys.stat(p).type == sys::FileType::directory;
}
bool is_file(const sys::Sys& sys, const std::string& p) {
  return sys.stat(p).type == sys::FileType::regular;
}

// Looks like a toolkit root: a bin/nvcc, or a CUDA runtime in lib64/lib/targets.
bool looks_like_toolkit(Context& ctx, const std::string& root) {
  const auto& sys = ctx.sys();
  if (is_file(sys, root + "/bin/nvcc") || is_file(sys, root + "/version.json") || is_file(sys, root + "/version.txt"))
    return true;
  for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"})
    if (const auto names = ctx.list_optional(root + sub))
      for (const auto& n : *names)
        if (n.starts_with("libcudart.so")) return true;
  return false;
}

// A component's library in a directory: the longest versioned name of libX.so.* wins
// (libcublas.so.12.2.5.6 over libcublas.so.12).
std::pair<std::string, std::string> find_component(Context& ctx, const std::string& dir, const std::string& stem) {
  const auto names = ctx.list_optional(dir);
  if (!names) return {};
  std::string best;
  for (const auto& n : *names) {
    if (!n.starts_with(stem + ".so.")) continue;
    const auto v = n.substr(stem.size() + 4);
    if (!util::Version::parse(v)) continue;
    if (best.empty() || n.size() > best.size()) best = n;
  }
  if (best.empty()) return {};
  return {sys::join(dir, best), best.substr(stem.size() + 4)};
}

// dist-info directories: nvidia_cuda_runtime-13.0.96.dist-info -> ("nvidia_cuda_runtime", "13.0.96").
std::vector<std::pair<std::string, std::string>> dist_infos(Context& ctx, const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  if (const auto names = ctx.list_optional(dir))
    for (const auto& n : *names) {
      if (!n.ends_with(".dist-info")) continue;
      const auto stem = n.substr(0, n.size() - 10);
      const auto dash = stem.rfind('-');
      if (dash != std::string::npos) out.emplace_back(stem.substr(0, dash), stem.substr(dash + 1));
    }
  return out;
}

// The version nvcc prints, read from the bytes of the nvcc binary instead of running it:
// nvcc embeds the banner "Cuda compilation tools, release 12.2, V12.2.140" that
// `nvcc --version` prints. Nothing from the examined tree is ever executed.
std::string nvcc_embedded_version(Context& ctx, const std::string& nvcc) {
  const auto blob = ctx.map_optional(nvcc);
  if (!blob) return "";
  const std::string_view bytes(reinterpret_cast<const char*>(blob->data()), blob->size());
  // The banner is a constant string: in .rodata (2.5 of nvcc 13.0's 30 MB) when the section
  // headers say where that is, else anywhere in the file.
  std::size_t begin = 0, end = bytes.size();
  if (const auto elf = elf::parse_elf(blob->data(), blob->size()))
    if (const auto* s = elf->section(".rodata"); s && s->offset <= bytes.size() && s->size <= bytes.size() - s->offset)
      begin = s->offset, end = s->offset + s->size;
  constexpr std::string_view k_banner = "Cuda compilation tools, release ";
  // Boyer-Moore-Horspool (find() stops at every 'C'), a window at a time, each window given
  // back when searched: the scan holds 1 MiB of the file in memory, not all of it.
  const std::boyer_moore_horspool_searcher searcher(k_banner.begin(), k_banner.end());
  constexpr std::size_t k_window = 1 << 20;
  std::size_t at = std::string_view::npos;
  for (std::size_t from = begin; from < end && at == std::string_view::npos;) {
    const auto to = std::min(end, from + k_window + k_banner.size() - 1);
    const auto window = bytes.substr(from, to - from);
    if (const auto hit = std::search(window.begin(), window.end(), searcher); hit != window.end())
      at = from + static_cast<std::size_t>(hit - window.begin());
    else
      blob->release(from, k_window);
    from += k_window;
  }
  if (at == std::string_view::npos) return "";
  const auto tail = bytes.substr(at + k_banner.size(), 64);
  const auto v = tail.find(", V");
  if (v == std::string_view::npos) return "";
  std::string out;
  for (const char c : tail.substr(v + 3)) {
    if ((c < '0' || c > '9') && c != '.') break;
    out += c;
  }
  return util::Version::parse(out) ? out : "";
}

// Where the toolkit's binaries and libraries are, for its layout.
void describe_layout(Context& ctx, Toolkit& t) {
  const auto& sys = ctx.sys();
  const auto& root = t.root;
  t.bin_dir = root + "/bin";
  if (t.layout == "debian") {
    t.lib_dir = "/usr/lib/x86_64-linux-gnu";
  } else {
    for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"})
      if (is_dir(sys, root + sub)) {
        t.lib_dir = sys.canonical(root + sub).value_or(root + sub);
        break;
      }
  }
  if (is_file(sys, t.bin_dir + "/nvcc"))
    t.nvcc = t.bin_dir + "/nvcc";
  else
    t.missing.emplace_back("bin/nvcc");
}

// Every file that states the toolkit's version.
void read_witnesses(Context& ctx, const std::vector<std::pair<std::string, std::string>>& dists, Toolkit& t) {
  if (const auto j = ctx.read_optional(t.root + "/version.json", 1 << 20)) {
    static const std::regex re(R"re("cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([0-9.]+)")re");
    std::smatch m;
    if (std::regex_search(*j, m, re)) t.witnesses.push_back({"version.json", m[1]});
  }
  if (const auto txt = ctx.read_optional(t.root + "/version.txt", 4096)) {
    static const std::regex re(R"(CUDA Version ([0-9.]+))");
    std::smatch m;
    if (std::regex_search(*txt, m, re)) t.witnesses.push_back({"version.txt", m[1]});
  }
  if (!t.nvcc.empty())
    if (const auto v = nvcc_embedded_version(ctx, t.nvcc); !v.empty()) t.witnesses.push_back({"nvcc binary", v});
  for (const auto& [name, version] : dists)
    if (name == "nvidia_cuda_runtime" || name.starts_with("nvidia_cuda_runtime_cu"))
      t.witnesses.push_back({"dist-info " + name + "-" + version, version});
  const auto cudart = find_component(ctx, t.lib_dir, "libcudart");
  if (!cudart.first.empty())
    t.witnesses.push_back({sys::basename(cudart.first), cudart.second});
  else
    t.missing.emplace_back("libcudart");
}

// Components: the library file, its version from the longest file name, else from dist-info.
void read_components(Context& ctx, const std::vector<std::pair<std::string, std::string>>& dists, Toolkit& t) {
  const std::pair<const char*, const char*> components[] = {
      {"cudart", "libcudart"}, {"cublas", "libcublas"}, {"cufft", "libcufft"}, {"cusparse", "libcusparse"},
      {"cudnn", "libcudnn"},   {"nccl", "libnccl"},     {"nvrtc", "libnvrtc"}, {"nvjitlink", "libnvJitLink"}};
  for (const auto& [name, stem] : components) {
    const auto [lib, version] = find_component(ctx, t.lib_dir, stem);
    if (lib.empty()) continue;
    snapshot::ToolkitComponent c{name, version, lib};
    for (const auto& [dname, dversion] : dists) {
      const auto want =
          std::string(name) == "cudart" ? std::string("nvidia_cuda_runtime") : "nvidia_" + std::string(name);
      if ((dname == want || dname.starts_with(want + "_cu")) && util::Version::parse(dversion) &&
          util::Version::parse(dversion)->parts.size() > util::Version::parse(version)->parts.size())
        c.version = dversion;
    }
    t.components.push_back(std::move(c));
  }
}

void describe(Context& ctx, Toolkit& t) {
  describe_layout(ctx, t);
  const auto dists = dist_infos(ctx, t.root + "/dist-info");
  read_witnesses(ctx, dists, t);
  read_components(ctx, dists, t);
  // The toolkit's version: nvcc's, else version.json's, else the runtime's.
  for (const char* pref : {"nvcc binary", "version.json", "version.txt"})
    for (const auto& w : t.witnesses)
      if (t.version.empty() && w.source == pref) t.version = w.version;
  for (const auto& w : t.witnesses)
    if (t.version.empty()) t.version = w.version;
  if (t.layout == "conda")
    if (const auto metas = ctx.list_optional(t.root + "/conda-meta"))
      for (const auto& m : *metas) {
        static const std::regex re(R"(^(cuda-toolkit|cudatoolkit)-([0-9.]+)-)");
        std::smatch mm;
        if (std::regex_search(m, mm, re)) t.witnesses.push_back({"conda-meta " + m, mm[2]});
      }
}

// The toolkit roots found so far, each once by its canonical path, with every way it was found.
struct Candidates {
  struct Candidate {
    std::string root;  // logical, canonical
    std::vector<ToolkitFoundBy> found_by;
    std::string layout;
  };
  Context& ctx;
  std::vector<Candidate> list;

  void add(const std::string& dir, ToolkitFoundBy how, const std::string& layout = "nvidia") {
    const auto& sys = ctx.sys();
    const auto real = sys.canonical(dir);
    if (!real || !is_dir(sys, *real) || (layout == "nvidia" && !looks_like_toolkit(ctx, *real))) return;
    for (auto& c : list)
      if (c.root == *real) {
        if (std::find(c.found_by.begin(), c.found_by.end(), how) == c.found_by.end()) c.found_by.push_back(how);
        return;
      }
    list.push_back({*real, {std::move(how)}, layout});
  }
};

// The places toolkits are installed to: /usr/local/cuda-*, /usr/local/cuda, /opt/cuda,
// Debian's package, and what CUDA_HOME, CUDA_PATH and CUDA_ROOT name.
void add_installed(Candidates& cands, snapshot::ToolkitFacts& f) {
  auto& ctx = cands.ctx;
  const auto& sys = ctx.sys();
  if (const auto names = ctx.list_optional("/usr/local"))
    for (const auto& n : *names)
      if (n.starts_with("cuda-") || n.starts_with("cuda_"))
        cands.add("/usr/local/" + n, {ToolkitFinder::usr_local_dir, ""});
  if (sys.stat("/usr/local/cuda", false).type == sys::FileType::symlink) {
    f.cuda_link_target = sys.read_link("/usr/local/cuda").value_or("");
    f.cuda_link_resolved = sys.canonical("/usr/local/cuda").value_or("");
  }
  cands.add("/usr/local/cuda", {ToolkitFinder::usr_local_cuda, ""});
  cands.add("/opt/cuda", {ToolkitFinder::opt_cuda, ""});
  if (is_file(sys, "/usr/lib/nvidia-cuda-toolkit/bin/nvcc"))
    cands.add("/usr/lib/nvidia-cuda-toolkit", {ToolkitFinder::distribution_package, ""}, "debian");
  for (const auto& [how, value] : {std::pair{ToolkitFinder::cuda_home, f.cuda_home},
                                   {ToolkitFinder::cuda_path, f.cuda_path},
                                   {ToolkitFinder::cuda_root, f.cuda_root}})
    if (value) cands.add(*value, {how, ""});
}

// The toolkit of every nvcc on PATH; the first is the one that runs.
void add_path_nvccs(Candidates& cands, snapshot::ToolkitFacts& f) {
  auto& ctx = cands.ctx;
  const auto& sys = ctx.sys();
  for (const auto& dir : f.path) {
    const auto nvcc = sys::join(dir, "nvcc");
    if (sys.stat(nvcc).type != sys::FileType::regular) continue;
    const ToolkitFoundBy how{f.path_nvcc.empty() ? ToolkitFinder::nvcc_on_path : ToolkitFinder::nvcc_later_on_path, ""};
    if (f.path_nvcc.empty()) {
      f.path_nvcc = nvcc;
      f.path_nvcc_real = sys.canonical(nvcc).value_or(nvcc);
    }
    // Debian's /usr/bin/nvcc is a script that runs the packaged toolkit's nvcc.
    if (dir == "/usr/bin" && is_file(sys, "/usr/lib/nvidia-cuda-toolkit/bin/nvcc")) {
      cands.add("/usr/lib/nvidia-cuda-toolkit", how, "debian");
      continue;
    }
    // Other wrapper scripts ("exec /usr/local/cuda-13.0/bin/nvcc") are not toolkits.
    unsigned char head[2] = {0, 0};
    if (const auto r = sys.open_reader(nvcc);
        r && (*r)->read_at(0, head, 2).value_or(0) == 2 && head[0] == '#' && head[1] == '!')
      continue;
    cands.add(sys::dirname(sys::dirname(sys.canonical(nvcc).value_or(nvcc))), how);
  }
}

// conda environments with the toolkit packages.
void add_conda_envs(Candidates& cands) {
  auto& ctx = cands.ctx;
  std::vector<std::string> envs;
  if (const auto p = ctx.sys().env("CONDA_PREFIX")) envs.push_back(*p);
  for (const char* base : {"/opt/conda", "/opt/miniconda3", "/opt/anaconda3"}) {
    envs.emplace_back(base);
    if (const auto names = ctx.list_optional(std::string(base) + "/envs"))
      for (const auto& n : *names) envs.push_back(std::string(base) + "/envs/" + n);
  }
  for (const auto& env : envs)
    if (const auto metas = ctx.list_optional(env + "/conda-meta"))
      for (const auto& m : *metas)
        if (m.starts_with("cuda-toolkit-") || m.starts_with("cudatoolkit-") || m.starts_with("cuda-nvcc-")) {
          cands.add(env, {ToolkitFinder::conda_environment, env}, "conda");
          break;
        }
}

// What the loader picks for each toolkit major's runtime.
void pick_runtimes(Context& ctx, snapshot::ToolkitFacts& f) {
  auto& resolver = ctx.resolver();
  std::vector<int> majors;
  for (const auto& t : f.toolkits)
    if (const auto v = util::Version::parse(t.version);
        v && std::find(majors.begin(), majors.end(), v->major()) == majors.end())
      majors.push_back(v->major());
  for (const int m : majors) {
    // CUDA 11's runtime soname is libcudart.so.11.0; from 12 on it is the major alone.
    const auto soname = m == 11 ? std::string("libcudart.so.11.0") : fmt::format("libcudart.so.{}", m);
    std::string found;
    const auto l = resolver.locate(soname, found);
    f.cudart_picks.push_back({soname, found, found.empty() ? "" : ld::to_string(l.rule)});
  }
}

// Loader configuration and shell start-up files that set CUDA paths for everyone.
void read_global_settings(Context& ctx, snapshot::ToolkitFacts& f) {
  const auto& sys = ctx.sys();
  std::vector<std::string> files = {"/etc/environment", "/etc/profile", "/etc/bash.bashrc", "/etc/zsh/zshenv"};
  if (const auto names = ctx.list_optional("/etc/profile.d"))
    for (const auto& n : *names) files.push_back("/etc/profile.d/" + n);
  if (const auto home = sys.env("HOME"))
    for (const char* rc : {"/.bashrc", "/.bash_profile", "/.profile", "/.zshrc", "/.zshenv"})
      files.push_back(*home + rc);
  if (const auto names = ctx.list_optional("/etc/ld.so.conf.d"))
    for (const auto& n : *names) files.push_back("/etc/ld.so.conf.d/" + n);
  for (const auto& file : files) {
    if (!is_file(sys, file)) continue;
    const auto text = ctx.read_optional(file, 1 << 20);
    if (!text) continue;
    int n = 0;
    for (const auto raw : util::lines(*text)) {
      ++n;
      const auto line = util::trim(raw);
      if (line.empty() || line.front() == '#' || !util::contains_icase(line, "cuda")) continue;
      f.global_settings.push_back({file, n, std::string(line)});
      if (file.starts_with("/etc/ld.so.conf.d/")) f.ld_so_conf_dirs.push_back(std::string(line) + " (" + file + ")");
    }
  }
}

}  // namespace

snapshot::ToolkitFacts probe_toolkits(Context& ctx) {
  const auto& sys = ctx.sys();
  snapshot::ToolkitFacts f;
  f.cuda_home = sys.env("CUDA_HOME");
  f.cuda_path = sys.env("CUDA_PATH");
  f.cuda_root = sys.env("CUDA_ROOT");
  const auto path = sys.env("PATH").value_or("");  // outlives the views split() returns
  for (const auto d : util::split(path, ':'))
    if (!d.empty()) f.path.emplace_back(d);
  const auto llp = sys.env("LD_LIBRARY_PATH").value_or("");
  for (const auto d : util::split(llp, ':'))
    if (!d.empty()) f.ld_library_path.emplace_back(d);

  Candidates cands{ctx, {}};
  add_installed(cands, f);
  add_path_nvccs(cands, f);
  add_conda_envs(cands);
  for (const auto& c : cands.list) {
    Toolkit t;
    t.root = c.root;
    t.layout = c.layout;
    t.found_by = c.found_by;
    describe(ctx, t);
    f.toolkits.push_back(std::move(t));
  }
  // Newest first.
  std::sort(f.toolkits.begin(), f.toolkits.end(), [](const Toolkit& a, const Toolkit& b) {
    const auto va = util::Version::parse(a.version), vb = util::Version::parse(b.version);
    if (va && vb && *va != *vb) return *va > *vb;
    return a.root < b.root;
  });
  pick_runtimes(ctx, f);
  read_global_settings(ctx, f);
  return f;
}

}  // namespace cudoctor::probe
