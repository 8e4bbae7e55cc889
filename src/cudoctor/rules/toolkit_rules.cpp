// L2: the toolkits, against the driver and against each other.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/util/version.hpp"

#include <set>

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

const Toolkit* toolkit_of(const Snapshot& s, const std::string& path) {
  for (const auto& t : s.toolkit.toolkits)
    if (inside(path, t.root) || (!t.lib_dir.empty() && t.layout != "debian" && inside(path, t.lib_dir))) return &t;
  return nullptr;
}

std::string env_fix(const Toolkit& t) { return fmt::format("eval \"$(cudoctor env {})\"", t.root); }

}  // namespace

std::vector<Finding> toolkit_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& s = m.snap;
  std::vector<Finding> out;
  const auto& tf = s.toolkit;
  // The stub on the loader's path breaks every CUDA program, toolkit or not.
  std::vector<std::string> stubs;
  for (const auto& d : tf.ld_library_path)
    if (d.find("/stubs") != std::string::npos) stubs.push_back("LD_LIBRARY_PATH: " + d);
  for (const auto& d : tf.ld_so_conf_dirs)
    if (d.find("/stubs") != std::string::npos) stubs.push_back("ld.so.conf: " + d);
  if (!stubs.empty()) {
    auto f = make_finding("stubs-on-loader-path");
    f.detail = "lib/stubs holds a libcuda.so for linking only; when the loader finds it before the driver's, "
               "cuInit returns 34 (CUDA_ERROR_STUB_LIBRARY) in every program.";
    f.evidence = stubs;
    f.fix = {"Take the stubs directory off LD_LIBRARY_PATH and /etc/ld.so.conf.d (link with -L…/stubs only).",
             {"export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -v /stubs | paste -sd:)", "sudo ldconfig"}};
    out.push_back(std::move(f));
  }
  if (tf.toolkits.empty()) {
    auto f = make_finding("no-toolkit");
    f.detail = "Nothing needs one to run PyTorch, JAX or CuPy wheels, which bring their own CUDA libraries; compiling "
               "CUDA code (nvcc, custom extensions) does.";
    out.push_back(std::move(f));
  }
  if (!tf.cuda_link_target.empty() && tf.cuda_link_resolved.empty()) {
    auto f = make_finding("cuda-link-dangling");
    f.title = fmt::format("/usr/local/cuda points to {}, which does not exist", tf.cuda_link_target);
    f.detail = "A toolkit was removed and the link left behind: build systems that use /usr/local/cuda fail.";
    f.evidence.push_back("/usr/local/cuda -> " + tf.cuda_link_target);
    if (!tf.toolkits.empty())
      f.fix = {"Point it at an installed toolkit.", {fmt::format("sudo ln -sfn {} /usr/local/cuda", tf.toolkits.front().root)}};
    out.push_back(std::move(f));
  }
  const auto& driver = m.driver.version;
  const Toolkit* path_toolkit = nullptr;  // the toolkit of the nvcc that runs
  for (const auto& t : tf.toolkits)
    for (const auto& how : t.found_by)
      if (how == "nvcc on PATH") path_toolkit = &t;
  for (const auto& t : tf.toolkits) {
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
      f.detail = "Parts of two toolkits are mixed in one directory (an upgrade over an old install, or libraries "
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
        f.detail = "Programs built with this toolkit fail at start with error 35 (cudaErrorInsufficientDriver) on this "
                   "driver.";
        f.evidence = ev;
        f.evidence.push_back(fmt::format("driver {}; CUDA {} needs ≥ {} (≥ {} through minor-version compatibility)",
                                         driver->str(), major_minor(t.version), need->str(),
                                         floor ? floor->str() : std::string("-")));
        f.fix = {"Upgrade the driver, or build with a toolkit the driver supports.", {"cudoctor plan"}};
        out.push_back(std::move(f));
      }
    }
    auto ok = make_finding("toolkit-found");
    ok.title = fmt::format("CUDA {} at {}{}", t.version.empty() ? "?" : t.version, t.root,
                           &t == path_toolkit ? " (nvcc on PATH)" : runtime_only ? " (runtime only)" : "");
    ok.evidence = ev;
    ok.evidence.push_back("found by: " + fmt::format("{}", fmt::join(t.found_by, ", ")));
    for (const auto& c : t.components) ok.evidence.push_back(fmt::format("{} {} ({})", c.name, c.version, c.library));
    out.push_back(std::move(ok));
  }
  if (path_toolkit && !tf.cuda_link_resolved.empty() && !inside(tf.cuda_link_resolved, path_toolkit->root) &&
      tf.cuda_link_resolved != path_toolkit->root) {
    auto f = make_finding("cuda-link-not-path-nvcc");
    f.title = fmt::format("/usr/local/cuda is {} but nvcc on PATH is {}", tf.cuda_link_resolved, tf.path_nvcc_real);
    f.detail = "Build systems that use /usr/local/cuda and the nvcc you run compile against different toolkits.";
    f.evidence = {"/usr/local/cuda -> " + tf.cuda_link_target, "nvcc on PATH: " + tf.path_nvcc + " -> " + tf.path_nvcc_real};
    f.fix = {"Switch the shell to one toolkit.", {env_fix(*path_toolkit)}};
    out.push_back(std::move(f));
  }
  if (path_toolkit && tf.cuda_home) {
    const Toolkit* home = nullptr;
    for (const auto& t : tf.toolkits)
      for (const auto& how : t.found_by)
        if (how == "CUDA_HOME") home = &t;
    if (home && home != path_toolkit) {
      auto f = make_finding("cuda-home-not-path-nvcc");
      f.title = fmt::format("CUDA_HOME={} but nvcc on PATH is {}", *tf.cuda_home, tf.path_nvcc_real);
      f.detail = "PyTorch C++ extensions and many build scripts take the toolkit from CUDA_HOME, while the shell runs "
                 "another nvcc.";
      f.evidence = {"CUDA_HOME=" + *tf.cuda_home, "nvcc on PATH: " + tf.path_nvcc_real};
      f.fix = {"Switch the shell to one toolkit.", {env_fix(*path_toolkit)}};
      out.push_back(std::move(f));
    }
  }
  if (path_toolkit) {
    const auto v = util::Version::parse(path_toolkit->version);
    for (const auto& pick : tf.cudart_picks) {
      if (!v || pick.path.empty()) continue;
      const auto* owner = toolkit_of(s, pick.path);
      if (!owner || owner == path_toolkit || !util::Version::parse(owner->version)) continue;
      const auto ov = util::Version::parse(owner->version);
      if (ov->major() != v->major() || ov->minor() == v->minor()) continue;
      auto f = make_finding("nvcc-runtime-mismatch");
      f.title = fmt::format("nvcc {} but the loader gives {} from CUDA {}", path_toolkit->version, pick.soname, owner->version);
      f.detail = "Programs compiled with this nvcc and linked to the shared runtime load another toolkit's libcudart.";
      f.evidence = {"nvcc on PATH: " + tf.path_nvcc_real, fmt::format("{} -> {} ({})", pick.soname, pick.path, pick.rule)};
      f.fix = {"Switch the shell to one toolkit.", {env_fix(*path_toolkit)}};
      out.push_back(std::move(f));
    }
  }
  if (!tf.global_settings.empty()) {
    auto f = make_finding("cuda-paths-set-globally");
    f.title = fmt::format("CUDA paths are set in {} system or shell start-up file line{}", tf.global_settings.size(),
                          tf.global_settings.size() == 1 ? "" : "s");
    f.detail = "One toolkit forced on every shell makes per-project versions fight; a project's own environment "
               "(direnv) keeps each on its toolkit.";
    for (const auto& g : tf.global_settings) f.evidence.push_back(fmt::format("{}:{}: {}", g.file, g.line, g.text));
    const auto example = tf.toolkits.empty() ? std::string("12.4") : major_minor(tf.toolkits.front().version);
    f.fix = {"Keep the machine's default there, and set a project's toolkit in the project.",
             {fmt::format("cudoctor env {} --write .envrc && direnv allow", example)}};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace cudoctor::rules
