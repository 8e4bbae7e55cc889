// L3: each framework in each Python environment, against the driver, the GPU and the loader.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "cudoctor/compat/binary.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {
namespace {

using snapshot::Framework;
using snapshot::PythonEnv;
using snapshot::Snapshot;

std::string display(const std::string& name) {
  if (name == "torch") return "PyTorch";
  if (name == "tensorflow") return "TensorFlow";
  if (name == "jax") return "JAX";
  if (name == "cupy") return "CuPy";
  if (name == "onnxruntime") return "ONNX Runtime";
  return name;
}

std::string label(const Framework& f, const PythonEnv& e) {
  return fmt::format("{} {} ({})", display(f.name), f.version, e.interpreter.empty() ? e.prefix : e.interpreter);
}

// The install command of the build `plan` recommends for this machine: the same judgement, for
// every GPU here (a build that runs on one GPU but not another is not recommended), and only
// releases with a wheel for the environment's Python.
std::string cuda_build_command(const view::Machine& m, const kb::KnowledgeBase& kb, const std::string& name,
                               const PythonEnv& env) {
  if (!kb.framework(name)) return "";
  const auto b = plan::recommended(kb, name, m.ccs, m.driver.version, m.python_version(env));
  return b ? b->install : "";
}

// The commands that put that build into this environment (fixes::pip_install), none when no
// build runs here.
std::vector<std::string> install_commands(const view::Machine& m, const kb::KnowledgeBase& kb, const PythonEnv& env,
                                          const Framework& f) {
  const auto line = cuda_build_command(m, kb, f.name, env);
  if (line.empty()) return {};
  return fixes::pip_install(m, env, &f, line);
}

// What the fix does, in words, for the kind of environment it is printed for.
std::string install_text(const view::Machine& m, const PythonEnv& env, const Framework& f, const std::string& what) {
  switch (m.env_kind(env)) {
    case view::EnvKind::system:
      return what + " into a virtual environment (the system's package stays as it is).";
    case view::EnvKind::venv_system_site:
      if (f.inherited) return what + " into this venv: its own site-packages come before the system's.";
      break;
    default:
      break;
  }
  if (f.installer == "conda" && !f.inherited) return what + " with pip, after removing conda's package.";
  return what + " in this environment.";
}

// The pip wheel (dist-info name prefix) that ships a CUDA library, by the soname's stem.
std::string wheel_of(const std::string& soname) {
  constexpr std::pair<const char*, const char*> k_wheels[] = {
      {"libcudnn", "nvidia_cudnn_cu"},         {"libcublas", "nvidia_cublas_cu"},
      {"libcudart", "nvidia_cuda_runtime_cu"}, {"libnccl", "nvidia_nccl_cu"},
      {"libcufft", "nvidia_cufft_cu"},         {"libcusparse", "nvidia_cusparse_cu"},
      {"libnvrtc", "nvidia_cuda_nvrtc_cu"},    {"libcurand", "nvidia_curand_cu"},
      {"libcusolver", "nvidia_cusolver_cu"},   {"libnvJitLink", "nvidia_nvjitlink_cu"},
      {"libcupti", "nvidia_cuda_cupti_cu"},
  };
  for (const auto& [stem, wheel] : k_wheels)
    if (soname.starts_with(stem)) return wheel;
  return "";
}

// The library's name as NVIDIA writes it, for titles; the soname when it has none here.
std::string library_name(const std::string& soname) {
  constexpr std::pair<const char*, const char*> k_names[] = {
      {"libcudnn", "cuDNN"},         {"libcublasLt", "cuBLASLt"},
      {"libcublas", "cuBLAS"},       {"libcudart", "the CUDA runtime"},
      {"libnccl", "NCCL"},           {"libcufft", "cuFFT"},
      {"libcusparse", "cuSPARSE"},   {"libnvrtc", "NVRTC"},
      {"libcurand", "cuRAND"},       {"libcusolver", "cuSOLVER"},
      {"libnvJitLink", "nvJitLink"},
  };
  for (const auto& [stem, name] : k_names)
    if (soname.starts_with(stem)) return name;
  return soname;
}

// A version that says more than the soname's major: "9.1.0.70", not "9".
std::optional<util::Version> full_version(const std::string& text) {
  auto v = util::Version::parse(text);
  if (!v || v->parts.size() < 2) return std::nullopt;
  return v;
}

// The version of the copy a framework ships: its nvidia-* wheel's (the dist-info of the wheel
// for this soname whose major is the soname's), else the bundled file's own name. The second
// member says where it came from.
std::pair<std::optional<util::Version>, std::string> bundled_version(const PythonEnv& env,
                                                                     const snapshot::FrameworkLibrary& l) {
  const auto so = l.soname.find(".so.");
  const auto major = so == std::string::npos ? std::nullopt : util::Version::parse(l.soname.substr(so + 4));
  if (const auto wheel = wheel_of(l.soname); !wheel.empty() && l.bundled.find("/nvidia/") != std::string::npos)
    for (const auto& [name, version] : env.nvidia_packages)
      if (name.starts_with(wheel))
        if (const auto v = full_version(version); v && major && v->major() == major->major())
          return {v, fmt::format("{} {} (dist-info)", name, version)};
  const auto base = l.bundled.substr(l.bundled.rfind('/') + 1);
  if (const auto dot = base.find(".so."); dot != std::string::npos)
    if (const auto v = full_version(base.substr(dot + 4))) return {v, l.bundled};
  return {std::nullopt, ""};
}

// -1, 0, 1 as a is older, the same as or newer than b, compared on the parts both name
// (a file named 9.1.0 is the wheel 9.1.0.70).
int compare_common(const util::Version& a, const util::Version& b) {
  const auto n = std::min(a.parts.size(), b.parts.size());
  for (std::size_t i = 0; i < n; ++i)
    if (a.parts[i] != b.parts[i]) return a.parts[i] < b.parts[i] ? -1 : 1;
  return 0;
}

// The import name of a framework, for a line that checks which copy an interpreter imports.
std::string module_of(const std::string& name) {
  return name == "jax" ? "jaxlib" : name;
}

// The kernels found in the framework's own binaries, nullopt when none were read.
std::optional<kb::Kernels> found_kernels(const Framework& f) {
  if (f.sm_archs.empty() && f.ptx_archs.empty()) return std::nullopt;
  kb::Kernels k;
  for (const auto* list : {&f.sm_archs, &f.ptx_archs})
    for (const auto& a : *list)
      if (const auto t = compat::parse_target(a)) k.targets.push_back(*t);
  return k;
}

std::vector<std::string> lib_evidence(const Framework& f) {
  std::vector<std::string> ev;
  for (const auto& l : f.libraries)
    ev.push_back(fmt::format("{} -> {} ({}){}", l.soname, l.path, l.rule,
                             l.bundled.empty() || l.bundled == l.path ? "" : ", ships " + l.bundled));
  return ev;
}

// The build against this machine's GPUs and driver: plan::fit_build, the judgement `plan` shows.
// Returns whether it found the build unable to run.
bool judge_build(const view::Machine& m, const kb::KnowledgeBase& kb, const PythonEnv& env, const Framework& f,
                 const std::string& who, const std::vector<std::string>& base_ev, std::vector<Finding>& out) {
  const auto cuda = util::Version::parse(f.cuda.find('.') == std::string::npos ? f.cuda + ".0" : f.cuda);
  if (!cuda || !kb.min_driver_for_cuda(*cuda)) return false;
  const auto kernels = found_kernels(f);
  std::vector<util::Version> ccs = m.ccs;
  if (ccs.empty()) ccs.emplace_back();  // no GPU known: the driver alone
  bool driver_reported = false;
  bool broken = false;
  for (const auto& cc : ccs) {
    const std::optional<util::Version> gpu = cc.parts.empty() ? std::nullopt : std::optional(cc);
    auto fit =
        plan::fit_build(kb, plan::Machine{gpu, m.driver.version, m.jit_disabled}, *cuda, gpu ? kernels : std::nullopt);
    // Without its binaries' kernels, only the driver's half of the judgement is a fact.
    if (fit.stop == plan::Stop::kernels && !kernels)
      fit = plan::fit_build(kb, plan::Machine{std::nullopt, m.driver.version, m.jit_disabled}, *cuda, std::nullopt);
    const auto install = fit.stop == plan::Stop::none ? std::vector<std::string>() : install_commands(m, kb, env, f);
    switch (fit.stop) {
      case plan::Stop::none:
      case plan::Stop::driver_vs_gpu:
        break;  // L1 reports a driver that cannot run the GPU
      case plan::Stop::kernels: {
        // Only what its binaries show: without them, what its CUDA can compile is a bound, not a fact.
        if (!kernels) break;
        auto x = make_finding("framework-no-kernels-for-gpu");
        x.title = fmt::format("{} has no kernels for {} (compute capability {})", who, plan::sm(*gpu), gpu->str());
        x.detail = fmt::format(
            "Its binaries carry {} and PTX {}: nothing that runs on this GPU. Kernels fail with "
            "\"no kernel image is available for execution on the device\".",
            f.sm_archs.empty() ? "no cubins" : fmt::format("cubins for {}", fmt::join(f.sm_archs, " ")),
            f.ptx_archs.empty() ? "none" : fmt::format("{}", fmt::join(f.ptx_archs, " ")));
        x.evidence = base_ev;
        x.fix = {install_text(m, env, f, "Install a build whose architecture list includes this GPU"), install};
        out.push_back(std::move(x));
        broken = true;
        break;
      }
      case plan::Stop::ptx_jit: {
        auto x = make_finding("framework-ptx-jit-unavailable");
        x.title = fmt::format("{} {}", who, fit.why);
        x.detail = fmt::format(
            "Its binaries have no cubin for {}, only PTX, which the driver must JIT-compile when the "
            "program loads. Kernels fail with \"the provided PTX was compiled with an unsupported "
            "toolchain\" or \"no kernel image is available\".",
            plan::sm(*gpu));
        x.evidence = base_ev;
        x.evidence.push_back(fmt::format(
            "{}; driver {}",
            fit.kernels && fit.kernels->ptx_denied ? "PTX " + fit.kernels->ptx_denied->name() : std::string("PTX only"),
            m.driver.version ? m.driver.version->str() : "?"));
        const auto cubins = fmt::format("install a build with cubins for {}", plan::sm(*gpu));
        x.fix = {fit.unlock_driver ? fmt::format("Upgrade the driver to ≥ {}, or {}", fit.unlock_driver->str(),
                                                 install_text(m, env, f, cubins))
                                   : install_text(m, env, f, "I" + cubins.substr(1)),
                 install};
        out.push_back(std::move(x));
        broken = true;
        break;
      }
      case plan::Stop::gpu_branch:
      case plan::Stop::driver_too_old: {
        if (driver_reported) break;
        driver_reported = true;
        const bool branch = fit.stop == plan::Stop::gpu_branch;
        auto x = make_finding(branch ? "framework-cuda-beyond-gpu-branch" : "framework-cuda-too-new-for-driver");
        x.title = branch ? fmt::format("{} is built for CUDA {}, which {}", who, f.cuda, fit.why)
                         : fmt::format("{} is built for CUDA {}, which needs driver ≥ {}; this driver is {}", who,
                                       f.cuda, fit.need.str(), m.driver.version->str());
        x.detail = "CUDA initialisation fails with error 35; torch.cuda.is_available() is False.";
        x.evidence = base_ev;
        if (m.driver.version)
          x.evidence.push_back(
              fmt::format("driver {} ({})", m.driver.version->str(), view::to_string(m.driver.witness)));
        x.fix = {
            branch
                ? install_text(m, env, f, "Install a build for a CUDA that this GPU's last driver branch supports")
                : "Upgrade the driver, or " + install_text(m, env, f, "install the build for a CUDA this driver runs"),
            install};
        out.push_back(std::move(x));
        broken = true;
        break;
      }
    }
  }
  return broken;
}

}  // namespace

std::vector<Finding> framework_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& s = m.snap;
  std::vector<Finding> out;
  const auto& py = s.python;
  const bool nvidia = !s.gpus.empty() || !s.driver.kernel_module.version.empty();
  // A venv on PATH that imports the system's site-packages: the system's frameworks are
  // reported once, for the venv's python, the one the user runs.
  const PythonEnv* path_env = nullptr;
  for (const auto& e : py.envs)
    if (!py.path_python_env.empty() && e.prefix == py.path_python_env) path_env = &e;
  std::set<std::string> reported_in_path_venv;
  if (path_env && m.env_kind(*path_env) == view::EnvKind::venv_system_site)
    for (const auto& f : path_env->frameworks)
      if (f.inherited) reported_in_path_venv.insert(f.location);
  std::size_t count = 0;
  for (const auto& env : py.envs)
    for (const auto& f : env.frameworks) {
      ++count;
      if (&env != path_env && !f.inherited && reported_in_path_venv.count(f.location)) continue;
      const auto who = label(f, env);
      std::vector<std::string> base_ev = {fmt::format("{}: version {}, CUDA {}{}", f.source, f.version,
                                                      f.cuda_unknown   ? "unknown"
                                                      : f.cuda.empty() ? "none"
                                                                       : f.cuda,
                                                      f.hip.empty() ? "" : ", ROCm " + f.hip),
                                          "location: " + f.location};
      if (!f.hip.empty() && nvidia) {
        auto x = make_finding("framework-rocm-build");
        x.title = fmt::format("{} is a ROCm (AMD) build", who);
        x.detail = "A ROCm build drives AMD GPUs through HIP; it cannot use an NVIDIA GPU.";
        x.evidence = base_ev;
        x.fix = {install_text(m, env, f, "Install a CUDA build"), install_commands(m, kb, env, f)};
        out.push_back(std::move(x));
        continue;
      }
      if (f.cuda.empty() && (f.name == "torch" || f.name == "tensorflow" || f.name == "jax")) {
        auto x = make_finding("cpu-only-build");
        x.title = fmt::format("{} is a CPU-only build", who);
        x.detail = f.name == "torch"
                       ? "torch.cuda.is_available() is False and CUDA calls raise \"Torch not compiled with CUDA "
                         "enabled\", whatever the GPU and driver."
                       : "It was built without CUDA, so it never uses a GPU.";
        const auto kind = m.env_kind(env);
        if (kind == view::EnvKind::system)
          x.detail += " It comes from the distribution's package, which is built for the CPU.";
        else if (f.inherited)
          x.detail += fmt::format(
              " It comes from {}'s site-packages, which this venv imports "
              "(include-system-site-packages = true).",
              env.base_prefix.empty() ? std::string("the base interpreter") : env.base_prefix);
        x.evidence = base_ev;
        if (f.inherited)
          x.evidence.push_back(fmt::format("{}/pyvenv.cfg: include-system-site-packages = true", env.prefix));
        const auto cmds = install_commands(m, kb, env, f);
        x.fix = {install_text(m, env, f, "Install a CUDA build that fits this machine") +
                     (cmds.empty() ? " None in the knowledge base runs here; cudoctor plan says why." : ""),
                 cmds};
        out.push_back(std::move(x));
        continue;
      }
      bool broken = false;
      if (!f.error.empty()) {
        auto x = make_finding("framework-library-missing");
        x.title = fmt::format("{}: {} cannot be read", who, f.gpu_library);
        x.evidence = {f.error};
        out.push_back(std::move(x));
        broken = true;
      }
      if (!f.missing.empty()) {
        auto x = make_finding("framework-library-missing");
        x.title = fmt::format("{} needs {}, which the loader cannot find", who, fmt::join(f.missing, ", "));
        x.detail = "The import fails with \"cannot open shared object file\" (or the GPU is silently unused).";
        x.evidence = base_ev;
        x.evidence.push_back("resolved from " + f.gpu_library);
        x.fix = {"Reinstall the framework with its CUDA dependencies, or install the missing CUDA libraries.",
                 {},
                 {fmt::format("cudoctor ldd --why {} {}", f.missing.front(), fixes::shell_quote(f.gpu_library))}};
        out.push_back(std::move(x));
        broken = true;
      }
      for (const auto& v : f.missing_versions) {
        auto x = make_finding("framework-symbol-version-missing");
        x.title = fmt::format("{}: version {} not found", who, v);
        x.detail = "The library the loader picks is older than the one the framework was built against.";
        x.fix = {"Install a newer copy of that library, or remove the older one from the loader's path.", {}};
        out.push_back(std::move(x));
        broken = true;
      }
      for (const auto& l : f.libraries)
        if (!l.bundled.empty() && !l.path.empty() && l.path != l.bundled) {
          // The shadowing copy against the one the framework ships: an older one lacks what the
          // framework was built against; the same version is a harmless second copy.
          const auto theirs = full_version(l.version);
          const auto [ours, ours_from] = bundled_version(env, l);
          const int order = theirs && ours ? compare_common(*theirs, *ours) : -2;
          const auto name = library_name(l.soname);
          auto x = make_finding(order == 0 ? "framework-library-duplicate" : "framework-library-shadowed");
          if (order == -2) {
            x.title = fmt::format("{} loads {} from {} instead of its own {}", who, l.soname, l.path, l.bundled);
            x.detail = fmt::format(
                "{} finds another copy first{}; mixing CUDA library versions causes wrong symbols, "
                "\"undefined symbol\" errors or crashes.",
                l.rule, l.version.empty() ? "" : " (version " + l.version + ")");
          } else if (order < 0) {
            x.title = fmt::format("{} loads {} {} from {}, older than its own {}", who, name, theirs->str(), l.path,
                                  ours->str());
            x.detail = fmt::format(
                "{} finds the older copy first. The framework was built against {} {}: an older one "
                "lacks symbols and fixes it relies on (\"undefined symbol\", version "
                "mismatch errors, wrong results or crashes).",
                l.rule, name, ours->str());
          } else if (order > 0) {
            x.severity = Severity::warn;
            x.title = fmt::format("{} loads {} {} from {}, newer than its own {}", who, name, theirs->str(), l.path,
                                  ours->str());
            x.detail = fmt::format(
                "{} finds the newer copy first. Newer CUDA libraries of the same major usually keep "
                "what older ones had, so this tends to work; the framework was tested with {}.",
                l.rule, ours->str());
          } else {
            x.title = fmt::format("{} loads {} {} from {}, the same version as its own copy", who, name, theirs->str(),
                                  l.path);
            x.detail = fmt::format(
                "{} finds another copy first, of the same version as the one the framework ships: "
                "harmless while the two stay the same.",
                l.rule);
          }
          x.evidence = lib_evidence(f);
          if (theirs) x.evidence.push_back(fmt::format("{}: version {} (its file name)", l.path, theirs->str()));
          if (ours) x.evidence.push_back(fmt::format("its own copy: version {}, from {}", ours->str(), ours_from));
          const auto dir = l.path.substr(0, l.path.rfind('/'));
          if (order == 0)
            x.fix = {
                "Nothing breaks while the versions match; take the directory off LD_LIBRARY_PATH to keep one copy.",
                {}};
          else if (l.rule == "LD_LIBRARY_PATH")
            x.fix = {"Take that directory off LD_LIBRARY_PATH for this environment.",
                     {fixes::drop_from_ld_library_path({dir})}};
          else
            x.fix = {"Remove the other copy from the loader's path.",
                     {},
                     {fmt::format("cudoctor ldd --why {} {}", l.soname, fixes::shell_quote(f.gpu_library))}};
          out.push_back(std::move(x));
          broken = broken || order < 0;
        }
      std::set<std::string> runtimes;
      for (const auto& l : f.libraries)
        if (l.soname.starts_with("libcudart.so.")) runtimes.insert(l.soname);
      if (runtimes.size() > 1) {
        auto x = make_finding("framework-two-cuda-runtimes");
        x.title = fmt::format("{} loads {}", who, fmt::join(runtimes, " and "));
        x.detail =
            "Two CUDA runtimes of different majors in one process keep separate state; device memory and "
            "streams of one are invalid in the other.";
        x.evidence = lib_evidence(f);
        out.push_back(std::move(x));
      }
      if (!f.cuda.empty()) broken = judge_build(m, kb, env, f, who, base_ev, out) || broken;
      // A bundled nvidia-* wheel older than the framework's pin.
      for (const auto& req : f.requires_nvidia) {
        const auto eq = req.find("==");
        if (eq == std::string::npos) continue;
        auto want_name = req.substr(0, eq);
        for (auto& ch : want_name) ch = ch == '-' ? '_' : ch;
        const auto want = util::Version::parse(req.substr(eq + 2));
        for (const auto& [name, version] : env.nvidia_packages)
          if (name == want_name && want) {
            const auto have = util::Version::parse(version);
            if (have && *have < *want) {
              auto x = make_finding("framework-library-older");
              x.title = fmt::format("{} pins {} but {} is installed", who, req, version);
              x.fix = {"Reinstall the pinned version.",
                       m.env_kind(env) == view::EnvKind::system || f.inherited
                           ? std::vector<std::string>{}
                           : fixes::pip_install(m, env, nullptr, "pip install " + fixes::shell_quote(req))};
              out.push_back(std::move(x));
            }
          }
      }
      if (!broken) {
        auto x = make_finding("framework-found");
        x.title = f.cuda.empty() ? who : fmt::format("{}: CUDA {} build", who, f.cuda);
        x.evidence = base_ev;
        if (!f.sm_archs.empty()) x.evidence.push_back("cubins: " + fmt::format("{}", fmt::join(f.sm_archs, " ")));
        for (const auto& e : lib_evidence(f)) x.evidence.push_back(e);
        out.push_back(std::move(x));
      }
    }
  if (count == 0) {
    auto x = make_finding("no-framework");
    x.detail = "No PyTorch, TensorFlow, JAX, CuPy or ONNX Runtime in the Python environments found.";
    // A machine with thousands of environments gets the first ones named and a count.
    constexpr std::size_t k_named = 20;
    for (std::size_t i = 0; i < py.envs.size() && i < k_named; ++i)
      x.evidence.push_back(py.envs[i].prefix + " (" + fmt::format("{}", fmt::join(py.envs[i].found_by, ", ")) + ")");
    if (py.envs.size() > k_named)
      x.evidence.push_back(fmt::format("and {} more environments", py.envs.size() - k_named));
    out.push_back(std::move(x));
  }
  if (!py.lists_cut.empty()) {
    auto x = make_finding("python-envs-not-inspected");
    std::uint64_t skipped = 0;
    for (const auto& c : py.lists_cut) {
      skipped += c.entries - c.inspected;
      x.evidence.push_back(fmt::format("{}: {} entries, the first {} inspected", c.source, c.entries, c.inspected));
    }
    const auto& first = py.lists_cut.front();
    x.title = py.lists_cut.size() == 1 ? fmt::format("{} entries not inspected: {} lists {} Python environments",
                                                     skipped, first.source, first.entries)
                                       : fmt::format("{} entries not inspected in {} lists of Python environments",
                                                     skipped, py.lists_cut.size());
    x.detail = fmt::format(
        "cudoctor inspects the first {} entries of each list of environments, so that a directory "
        "anyone can write to cannot make a run take minutes; a framework in an environment past "
        "them is not reported.",
        first.inspected);
    x.fix = {"Name the environment to inspect: cudoctor --python ENVIRONMENT/bin/python3.", {}};
    out.push_back(std::move(x));
  }
  // The python a user types is not the one that has the framework.
  if (path_env && path_env->frameworks.empty()) {
    std::vector<std::string> elsewhere;
    for (const auto& e : py.envs)
      for (const auto& f : e.frameworks)
        elsewhere.push_back(fmt::format("{} {} in {} ({})", display(f.name), f.version, e.prefix,
                                        e.interpreter.empty() ? "no interpreter" : e.interpreter));
    if (!elsewhere.empty()) {
      auto x = make_finding("python-on-path-lacks-framework");
      x.title = fmt::format("python3 on PATH ({}) has no framework; {}", py.path_python, elsewhere.front());
      x.detail =
          "`python3` runs an interpreter whose environment has none of the frameworks installed elsewhere, so "
          "\"import torch\" fails or picks another copy.";
      x.evidence = {"python3 on PATH: " + py.path_python + " -> " + py.path_python_env};
      for (const auto& e : elsewhere) x.evidence.push_back("found: " + e);
      x.fix = {"Run the interpreter that has it, or activate its environment.", {}};
      for (const auto& e : py.envs)
        if (!e.frameworks.empty() && !e.interpreter.empty()) {
          const auto mod = module_of(e.frameworks.front().name);
          x.fix.checks.push_back(
              fmt::format("{} -c 'import {}; print({}.__version__)'", fixes::shell_quote(e.interpreter), mod, mod));
          break;
        }
      out.push_back(std::move(x));
    }
  }
  return out;
}

}  // namespace cudoctor::rules
