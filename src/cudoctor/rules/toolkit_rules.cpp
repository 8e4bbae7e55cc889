// L2: the toolkits, against the driver and against each other.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "cudoctor/plan/toolkit_selection.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {
namespace {

using snapshot::Snapshot;
using snapshot::Toolkit;

std::string major_minor(const std::string& v) {
  const auto p = util::Version::parse(v);
  return p ? fmt::format("{}.{}", p->major(), p->minor()) : v;
}

bool inside(const std::string& path, const std::string& root) {
  return !root.empty() && (path == root || path.starts_with(root + "/"));
}

std::string env_fix(const Toolkit& t) {
  return fmt::format("eval \"$(cudoctor env {})\"", fixes::shell_quote(t.root));
}

// Whether a start-up file line sets a path (PATH, LD_LIBRARY_PATH, CUDA_HOME, …) rather than
// only other variables (CUDA_VISIBLE_DEVICES, CUDA_MODULE_LOADING). A line that sets nothing
// itself counts only when it sources a file (`. /opt/cuda/env.sh`), which may; an ld.so.conf.d
// line is a loader path.
bool sets_cuda_path(const snapshot::GlobalSetting& g) {
  if (g.file.starts_with("/etc/ld.so.conf.d/")) return true;
  const auto path_like = [](std::string_view name) {
    const auto lower = util::to_lower(name);  // csh's `path` is PATH
    for (const char* n : {"path", "ld_library_path", "library_path", "ld_run_path", "cpath", "c_include_path",
                          "cplus_include_path", "manpath", "cudacxx", "nvcc"})
      if (lower == n) return true;
    for (const char* suffix : {"_path", "_home", "_root", "_dir", "_bin", "_lib"})
      if (lower.ends_with(suffix)) return true;
    return false;
  };
  const auto is_name = [](std::string_view w) {
    if (w.empty() || !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_')) return false;
    for (const char c : w)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
  };
  std::vector<std::string_view> names;
  const auto words = util::split_ws(g.text);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto w = words[i];
    // csh's `setenv NAME value` and `set name = …`, fish's `set -gx NAME value`, `export NAME`.
    if ((w == "setenv" || w == "set" || w == "export") && i + 1 < words.size()) {
      std::size_t j = i + 1;
      while (j < words.size() && words[j].starts_with('-')) ++j;
      if (j < words.size() && is_name(words[j])) names.push_back(words[j]);
      continue;
    }
    const auto eq = w.find('=');
    if (eq == std::string_view::npos) continue;
    auto name = w.substr(0, eq);
    if (name.ends_with('+')) name.remove_suffix(1);  // bash's NAME+=value
    if (is_name(name)) names.push_back(name);
  }
  if (names.empty()) return !words.empty() && (words.front() == "." || words.front() == "source");
  return std::any_of(names.begin(), names.end(), path_like);
}

// A stubs directory on the loader's path. When libcuda.so.1 itself resolves into it every CUDA
// program loads the stub; otherwise only a program that opens the unversioned libcuda.so
// (which the stubs directory holds) gets it.
void stubs_rule(const view::Machine& m, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const auto& tf = s.toolkit;
  std::vector<std::string> stubs_ev, stubs_llp, stubs_conf_files;
  for (const auto& d : tf.ld_library_path)
    if (d.find("/stubs") != std::string::npos) {
      stubs_ev.push_back("LD_LIBRARY_PATH: " + d);
      stubs_llp.push_back(d);
    }
  for (const auto& d : tf.ld_so_conf_dirs)
    if (d.find("/stubs") != std::string::npos) {
      stubs_ev.push_back("ld.so.conf: " + d);
      // "<dir> (<file>)", as the toolkit probe records it.
      if (const auto open = d.rfind(" ("); open != std::string::npos && d.ends_with(')'))
        stubs_conf_files.push_back(d.substr(open + 2, d.size() - open - 3));
    }
  const snapshot::DriverLibrary* libcuda = nullptr;
  for (const auto& l : s.driver.libraries)
    if (l.soname == "libcuda.so.1" && !l.path.empty()) libcuda = &l;
  const bool stub_is_libcuda = libcuda && (libcuda->path.find("/stubs/") != std::string::npos ||
                                           libcuda->real_path.find("/stubs/") != std::string::npos);
  if (stub_is_libcuda || !stubs_ev.empty()) {
    auto f = make_finding(stub_is_libcuda ? FindingId("stubs-on-loader-path") : FindingId("stubs-dir-on-loader-path"));
    if (stub_is_libcuda) {
      f.title = fmt::format("libcuda.so.1 resolves to the toolkit's stub: {}", libcuda->path);
      f.detail =
          "lib/stubs holds a libcuda.so for linking only; the loader finds it before the driver's, so cuInit "
          "returns 34 (CUDA_ERROR_STUB_LIBRARY) in every CUDA program.";
      stubs_ev.push_back(fmt::format("libcuda.so.1 -> {} ({})", libcuda->path, libcuda->found_by));
      if (libcuda->found_by.starts_with("ld.so.conf") && stubs_conf_files.empty()) stubs_conf_files.push_back("");
    } else {
      f.title = fmt::format("A CUDA stubs directory is on the loader's path: {}",
                            stubs_ev.front().substr(stubs_ev.front().find(": ") + 2));
      f.detail = fmt::format(
          "lib/stubs holds a libcuda.so for linking only. libcuda.so.1 {}, so CUDA programs are not "
          "affected; the stub is reachable as libcuda.so by programs that dlopen the unversioned "
          "name, and those fail with error 34 (CUDA_ERROR_STUB_LIBRARY).",
          libcuda ? "resolves to " + libcuda->path : std::string("is not in that directory"));
    }
    f.evidence = stubs_ev;
    std::vector<std::string> text, cmds;
    if (!stubs_llp.empty()) {
      text.emplace_back("take it off LD_LIBRARY_PATH");
      cmds.push_back(fixes::drop_from_ld_library_path(stubs_llp));
    }
    if (!stubs_conf_files.empty()) {
      std::set<std::string> files(stubs_conf_files.begin(), stubs_conf_files.end());
      files.erase("");
      text.push_back(
          files.empty()
              ? std::string("delete its line from /etc/ld.so.conf.d and refresh the loader's cache")
              : fmt::format("delete its line from {} and refresh the loader's cache", fmt::join(files, ", ")));
      cmds.push_back(fixes::as_root(m, "ldconfig"));
    }
    if (text.empty()) text.emplace_back("take the stubs directory off the loader's path");
    auto what = fmt::format("{}", fmt::join(text, ", and "));
    what[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(what[0])));
    f.fix = {what + " (link with -L…/stubs only).", cmds};
    out.push_back(std::move(f));
  }
}

// /usr/local/cuda left pointing at a removed toolkit.
void dangling_link_rule(const view::Machine& m, std::vector<Finding>& out) {
  const auto& tf = m.snap.toolkit;
  if (!tf.cuda_link_target.empty() && tf.cuda_link_resolved.empty()) {
    auto f = make_finding("cuda-link-dangling");
    f.title = fmt::format("/usr/local/cuda points to {}, which does not exist", tf.cuda_link_target);
    f.detail = "A toolkit was removed and the link left behind: build systems that use /usr/local/cuda fail.";
    f.evidence.push_back("/usr/local/cuda -> " + tf.cuda_link_target);
    if (!tf.toolkits.empty())
      f.fix = {
          "Point it at an installed toolkit.",
          {fixes::as_root(m, fmt::format("ln -sfn {} /usr/local/cuda", fixes::shell_quote(tf.toolkits.front().root)))}};
    out.push_back(std::move(f));
  }
}

// One toolkit: its version witnesses, its parts, and its CUDA against the driver; toolkit-found
// when nothing stands against it.
void toolkit_rule(const view::Machine& m, const kb::KnowledgeBase& kb, const Toolkit& t, const Toolkit* path_toolkit,
                  std::vector<Finding>& out) {
  const auto& driver = m.driver.version;
  bool too_new = false;  // toolkit-newer-than-driver reports it; a "found" line beside it reads as a contradiction
  std::vector<std::string> ev;
  for (const auto& w : t.witnesses) ev.push_back(fmt::format("{}: {}", w.source, w.version));
  // Witnesses: every one that names a minor must agree on major.minor; majors must agree.
  std::set<std::string> mm;
  std::set<int> majors;
  for (const auto& w : t.witnesses)
    if (const auto v = util::Version::parse(w.version)) {
      majors.insert(v->major());
      if (v->parts.size() >= 2 && !w.source.starts_with("libcudart.so")) mm.insert(major_minor(w.version));
    }
  if (mm.size() > 1 || majors.size() > 1) {
    auto f = make_finding("toolkit-version-witnesses-disagree");
    f.title = fmt::format("{} claims CUDA {}", t.root, fmt::join(mm, " and "));
    f.detail =
        "Parts of two toolkits are mixed in one directory (an upgrade over an old install, or libraries "
        "copied in by hand); what gets compiled and what runs may not match.";
    f.evidence = ev;
    f.fix = {"Reinstall the toolkit into a clean directory.", {}};
    out.push_back(std::move(f));
  }
  const bool runtime_only = t.nvcc.empty() && !t.components.empty();
  if (!t.missing.empty() && !runtime_only) {
    auto f = make_finding("toolkit-incomplete");
    f.title = fmt::format("{} lacks {}", t.root, fmt::join(t.missing, ", "));
    f.detail = "A toolkit with nvcc but no runtime library (or the other way round) is usually half removed.";
    f.evidence = ev;
    out.push_back(std::move(f));
  }
  if (driver && !t.version.empty()) {
    const auto v = util::Version::parse(major_minor(t.version));
    if (v && kb.min_driver_for_cuda(*v) && kb.driver_fit(*driver, *v) == kb::DriverFit::too_old) {
      auto f = make_finding("toolkit-newer-than-driver");
      const auto need = kb.min_driver_for_cuda(*v);
      const auto floor = kb.minor_compat_floor(v->major());
      f.title = fmt::format("CUDA {} at {} needs driver ≥ {}; this driver is {}", major_minor(t.version), t.root,
                            (floor ? *floor : *need).str(), driver->str());
      f.detail =
          "Programs built with this toolkit fail at start with error 35 (cudaErrorInsufficientDriver) on this "
          "driver.";
      f.evidence = ev;
      f.evidence.push_back(fmt::format("driver {}; CUDA {} needs ≥ {} (≥ {} through minor-version compatibility)",
                                       driver->str(), major_minor(t.version), need->str(),
                                       floor ? floor->str() : std::string("-")));
      const auto plan = fixes::plan_command(m);
      f.fix = {"Upgrade the driver, or build with a toolkit the driver supports.",
               plan.empty() ? std::vector<std::string>{} : std::vector<std::string>{plan}};
      out.push_back(std::move(f));
      too_new = true;
    }
  }
  if (too_new) return;
  auto ok = make_finding("toolkit-found");
  ok.title = fmt::format("CUDA {} at {}{}", t.version.empty() ? "?" : t.version, t.root,
                         &t == path_toolkit ? " (nvcc on PATH)"
                         : runtime_only     ? " (runtime only)"
                                            : "");
  ok.evidence = ev;
  ok.evidence.push_back("found by: " + fmt::format("{}", fmt::join(snapshot::to_strings(t.found_by), ", ")));
  for (const auto& c : t.components) ok.evidence.push_back(fmt::format("{} {} ({})", c.name, c.version, c.library));
  out.push_back(std::move(ok));
}

// The nvcc on PATH against /usr/local/cuda, CUDA_HOME and the runtime the loader picks.
void path_toolkit_rules(const Snapshot& s, const Toolkit& path_toolkit, std::vector<Finding>& out) {
  const auto& tf = s.toolkit;
  if (!tf.cuda_link_resolved.empty() && !inside(tf.cuda_link_resolved, path_toolkit.root) &&
      tf.cuda_link_resolved != path_toolkit.root) {
    auto f = make_finding("cuda-link-not-path-nvcc");
    f.title = fmt::format("/usr/local/cuda is {} but nvcc on PATH is {}", tf.cuda_link_resolved, tf.path_nvcc_real);
    f.detail = "Build systems that use /usr/local/cuda and the nvcc you run compile against different toolkits.";
    f.evidence = {"/usr/local/cuda -> " + tf.cuda_link_target,
                  "nvcc on PATH: " + tf.path_nvcc + " -> " + tf.path_nvcc_real};
    f.fix = {"Switch the shell to one toolkit.", {env_fix(path_toolkit)}};
    out.push_back(std::move(f));
  }
  if (tf.cuda_home) {
    const Toolkit* home = nullptr;
    for (const auto& t : tf.toolkits)
      for (const auto& how : t.found_by)
        if (how.how == snapshot::ToolkitFinder::cuda_home) home = &t;
    if (home && home != &path_toolkit) {
      auto f = make_finding("cuda-home-not-path-nvcc");
      f.title = fmt::format("CUDA_HOME={} but nvcc on PATH is {}", *tf.cuda_home, tf.path_nvcc_real);
      f.detail =
          "PyTorch C++ extensions and many build scripts take the toolkit from CUDA_HOME, while the shell runs "
          "another nvcc.";
      f.evidence = {"CUDA_HOME=" + *tf.cuda_home, "nvcc on PATH: " + tf.path_nvcc_real};
      f.fix = {"Switch the shell to one toolkit.", {env_fix(path_toolkit)}};
      out.push_back(std::move(f));
    }
  }
  {
    const auto v = util::Version::parse(path_toolkit.version);
    for (const auto& pick : tf.cudart_picks) {
      if (!v || pick.path.empty()) continue;
      const auto* owner = plan::toolkit_of(s.toolkit, pick.path);
      if (!owner || owner == &path_toolkit || !util::Version::parse(owner->version)) continue;
      const auto ov = util::Version::parse(owner->version);
      if (ov->major() != v->major() || ov->minor() == v->minor()) continue;
      auto f = make_finding("nvcc-runtime-mismatch");
      f.title = fmt::format("nvcc {} but the loader gives {} from CUDA {}", path_toolkit.version, pick.soname,
                            owner->version);
      f.detail = "Programs compiled with this nvcc and linked to the shared runtime load another toolkit's libcudart.";
      f.evidence = {"nvcc on PATH: " + tf.path_nvcc_real,
                    fmt::format("{} -> {} ({})", pick.soname, pick.path, pick.rule)};
      f.fix = {"Switch the shell to one toolkit.", {env_fix(path_toolkit)}};
      out.push_back(std::move(f));
    }
  }
}

// Start-up files or ld.so.conf.d lines that set CUDA paths for everyone.
void global_paths_rule(const view::Machine& m, const Toolkit* path_toolkit, std::vector<Finding>& out) {
  const auto& tf = m.snap.toolkit;
  std::vector<const snapshot::GlobalSetting*> paths_set;
  for (const auto& g : tf.global_settings)
    if (sets_cuda_path(g)) paths_set.push_back(&g);
  if (!paths_set.empty()) {
    auto f = make_finding("cuda-paths-set-globally");
    f.title = fmt::format("CUDA paths are set in {} system or shell start-up file line{}", paths_set.size(),
                          paths_set.size() == 1 ? "" : "s");
    f.detail =
        "One toolkit forced on every shell makes per-project versions fight; a project's own environment "
        "(direnv) keeps each on its toolkit.";
    for (const auto* g : paths_set) f.evidence.push_back(fmt::format("{}:{}: {}", g->file, g->line, g->text));
    // A toolkit that is installed: the one whose nvcc runs, else the first found.
    const Toolkit* example = path_toolkit ? path_toolkit : tf.toolkits.empty() ? nullptr : &tf.toolkits.front();
    if (tf.toolkits.size() > 1 && m.has_tool("direnv"))
      f.fix = {
          fmt::format("Keep the machine's default there, and set a project's toolkit in the project (here CUDA {}).",
                      example->version.empty() ? "at " + example->root : example->version),
          {fmt::format("cudoctor env {} --write .envrc && direnv allow", fixes::shell_quote(example->root))}};
    else if (example)
      f.fix = {
          fmt::format(
              "Keep the machine's default there, and switch a shell to a toolkit when it needs one (here CUDA {}).",
              example->version.empty() ? "at " + example->root : example->version),
          {env_fix(*example)}};
    else
      f.fix = {"No CUDA toolkit is installed, so these lines point at nothing; remove them.", {}};
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> toolkit_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& tf = m.snap.toolkit;
  std::vector<Finding> out;
  stubs_rule(m, out);
  if (tf.toolkits.empty()) {
    auto f = make_finding("no-toolkit");
    f.detail =
        "Nothing needs one to run PyTorch, JAX or CuPy wheels, which bring their own CUDA libraries; compiling "
        "CUDA code (nvcc, custom extensions) does.";
    out.push_back(std::move(f));
  }
  dangling_link_rule(m, out);
  const Toolkit* path_toolkit = nullptr;  // the toolkit of the nvcc that runs
  for (const auto& t : tf.toolkits)
    for (const auto& how : t.found_by)
      if (how.how == snapshot::ToolkitFinder::nvcc_on_path) path_toolkit = &t;
  for (const auto& t : tf.toolkits) toolkit_rule(m, kb, t, path_toolkit, out);
  if (path_toolkit) path_toolkit_rules(m.snap, *path_toolkit, out);
  global_paths_rule(m, path_toolkit, out);
  return out;
}

}  // namespace cudoctor::rules
