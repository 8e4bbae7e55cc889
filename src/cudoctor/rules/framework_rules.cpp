// L3: each framework in each Python environment, against the driver, the GPU and the loader.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "cudoctor/compat/binary.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/rules/catalog.hpp"
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
// every GPU here (a build that runs on one GPU but not another is not recommended).
std::string cuda_build_command(const view::Machine& m, const kb::KnowledgeBase& kb, const std::string& name) {
  if (!kb.framework(name)) return "";
  const auto b = plan::recommended(kb, name, m.ccs, m.driver.version);
  return b ? b->install : "";
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
bool judge_build(const view::Machine& m, const kb::KnowledgeBase& kb, const Framework& f, const std::string& who,
                 const std::vector<std::string>& base_ev, std::vector<Finding>& out) {
  const auto cuda = util::Version::parse(f.cuda.find('.') == std::string::npos ? f.cuda + ".0" : f.cuda);
  if (!cuda || !kb.min_driver_for_cuda(*cuda)) return false;
  const auto kernels = found_kernels(f);
  std::vector<util::Version> ccs = m.ccs;
  if (ccs.empty()) ccs.emplace_back();  // no GPU known: the driver alone
  bool driver_reported = false;
  bool broken = false;
  for (const auto& cc : ccs) {
    const std::optional<util::Version> gpu = cc.parts.empty() ? std::nullopt : std::optional(cc);
    auto fit = plan::fit_build(kb, plan::Machine{gpu, m.driver.version, m.jit_disabled}, *cuda, gpu ? kernels : std::nullopt);
    // Without its binaries' kernels, only the driver's half of the judgement is a fact.
    if (fit.stop == plan::Stop::kernels && !kernels)
      fit = plan::fit_build(kb, plan::Machine{std::nullopt, m.driver.version, m.jit_disabled}, *cuda, std::nullopt);
    const auto install = fit.stop == plan::Stop::none ? std::string() : cuda_build_command(m, kb, f.name);
    switch (fit.stop) {
      case plan::Stop::none:
      case plan::Stop::driver_vs_gpu: break;  // L1 reports a driver that cannot run the GPU
      case plan::Stop::kernels: {
        // Only what its binaries show: without them, what its CUDA can compile is a bound, not a fact.
        if (!kernels) break;
        auto x = make_finding("framework-no-kernels-for-gpu");
        x.title = fmt::format("{} has no kernels for {} (compute capability {})", who, plan::sm(*gpu), gpu->str());
        x.detail = fmt::format("Its binaries carry {} and PTX {}: nothing that runs on this GPU. Kernels fail with "
                               "\"no kernel image is available for execution on the device\".",
                               f.sm_archs.empty() ? "no cubins" : fmt::format("cubins for {}", fmt::join(f.sm_archs, " ")),
                               f.ptx_archs.empty() ? "none" : fmt::format("{}", fmt::join(f.ptx_archs, " ")));
        x.evidence = base_ev;
        x.fix = {"Install a build whose architecture list includes this GPU.",
                 install.empty() ? std::vector<std::string>{} : std::vector<std::string>{install}};
        out.push_back(std::move(x));
        broken = true;
        break;
      }
      case plan::Stop::ptx_jit: {
        auto x = make_finding("framework-ptx-jit-unavailable");
        x.title = fmt::format("{} {}", who, fit.why);
        x.detail = fmt::format("Its binaries have no cubin for {}, only PTX, which the driver must JIT-compile when the "
                               "program loads. Kernels fail with \"the provided PTX was compiled with an unsupported "
                               "toolchain\" or \"no kernel image is available\".",
                               plan::sm(*gpu));
        x.evidence = base_ev;
        x.evidence.push_back(fmt::format("{}; driver {}", fit.kernels && fit.kernels->ptx_denied
                                                            ? "PTX " + fit.kernels->ptx_denied->name()
                                                            : std::string("PTX only"),
                                         m.driver.version ? m.driver.version->str() : "?"));
        x.fix = {fit.unlock_driver ? fmt::format("Upgrade the driver to ≥ {}, or install a build with cubins for {}.",
                                                 fit.unlock_driver->str(), plan::sm(*gpu))
                                   : fmt::format("Install a build with cubins for {}.", plan::sm(*gpu)),
                 install.empty() ? std::vector<std::string>{} : std::vector<std::string>{install}};
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
                         : fmt::format("{} is built for CUDA {}, which needs driver ≥ {}; this driver is {}", who, f.cuda,
                                       fit.need.str(), m.driver.version->str());
        x.detail = "CUDA initialisation fails with error 35; torch.cuda.is_available() is False.";
        x.evidence = base_ev;
        if (m.driver.version)
          x.evidence.push_back(fmt::format("driver {} ({})", m.driver.version->str(), view::to_string(m.driver.witness)));
        x.fix = {branch ? "Install a build for a CUDA that this GPU's last driver branch supports."
                        : "Install the build for an older CUDA, or upgrade the driver.",
                 install.empty() ? std::vector<std::string>{} : std::vector<std::string>{install}};
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
  std::size_t count = 0;
  for (const auto& env : py.envs)
    for (const auto& f : env.frameworks) {
      ++count;
      const auto who = label(f, env);
      std::vector<std::string> base_ev = {fmt::format("{}: version {}, CUDA {}{}", f.source, f.version,
                                                      f.cuda.empty() ? "none" : f.cuda, f.hip.empty() ? "" : ", ROCm " + f.hip),
                                          "location: " + f.location};
      if (!f.hip.empty() && nvidia) {
        auto x = make_finding("framework-rocm-build");
        x.title = fmt::format("{} is a ROCm (AMD) build", who);
        x.detail = "A ROCm build drives AMD GPUs through HIP; it cannot use an NVIDIA GPU.";
        x.evidence = base_ev;
        const auto cmd = cuda_build_command(m, kb, f.name);
        x.fix = {"Install a CUDA build in this environment.", cmd.empty() ? std::vector<std::string>{} : std::vector<std::string>{cmd}};
        out.push_back(std::move(x));
        continue;
      }
      if (f.cuda.empty() && (f.name == "torch" || f.name == "tensorflow" || f.name == "jax")) {
        auto x = make_finding("cpu-only-build");
        x.title = fmt::format("{} is a CPU-only build", who);
        x.detail = f.name == "torch" ? "torch.cuda.is_available() is False and CUDA calls raise \"Torch not compiled with CUDA "
                                       "enabled\", whatever the GPU and driver."
                                     : "It was built without CUDA, so it never uses a GPU.";
        if (env.kind == "system")
          x.detail += " It comes from the distribution's package, which is built for the CPU.";
        x.evidence = base_ev;
        const auto cmd = cuda_build_command(m, kb, f.name);
        std::vector<std::string> cmds;
        if (env.kind == "system") {
          cmds.push_back("python3 -m venv ~/.venvs/gpu && . ~/.venvs/gpu/bin/activate");
          if (!cmd.empty()) cmds.push_back(cmd);
        } else if (!cmd.empty()) {
          cmds.push_back(env.interpreter.empty() ? cmd : cmd.substr(0, 4) == "pip " ? env.interpreter + " -m " + cmd : cmd);
        }
        x.fix = {env.kind == "system" ? "Install a CUDA build into a virtual environment (the system's package stays as it is)."
                                      : "Replace it with a CUDA build that fits this machine (cudoctor plan lists them all).",
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
                 {fmt::format("cudoctor ldd --why {} {}", f.missing.front(), f.gpu_library)}};
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
        if (!l.bundled.empty() && l.path != l.bundled) {
          auto x = make_finding("framework-library-shadowed");
          x.title = fmt::format("{} loads {} from {} instead of its own {}", who, l.soname, l.path, l.bundled);
          x.detail = fmt::format("{} finds another copy first{}; mixing CUDA library versions causes wrong symbols, "
                                 "\"undefined symbol\" errors or crashes.",
                                 l.rule, l.version.empty() ? "" : " (version " + l.version + ")");
          x.evidence = lib_evidence(f);
          x.fix = l.rule == "LD_LIBRARY_PATH"
                      ? Fix{"Take that directory off LD_LIBRARY_PATH for this environment.",
                            {fmt::format("export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -v '^{}$' | paste -sd:)",
                                         l.path.substr(0, l.path.rfind('/')))}}
                      : Fix{"Remove the other copy from the loader's path.", {"cudoctor ldd --why " + l.soname + " " + f.gpu_library}};
          out.push_back(std::move(x));
          broken = true;
        }
      std::set<std::string> runtimes;
      for (const auto& l : f.libraries)
        if (l.soname.starts_with("libcudart.so.")) runtimes.insert(l.soname);
      if (runtimes.size() > 1) {
        auto x = make_finding("framework-two-cuda-runtimes");
        x.title = fmt::format("{} loads {}", who, fmt::join(runtimes, " and "));
        x.detail = "Two CUDA runtimes of different majors in one process keep separate state; device memory and "
                   "streams of one are invalid in the other.";
        x.evidence = lib_evidence(f);
        out.push_back(std::move(x));
      }
      if (!f.cuda.empty()) broken = judge_build(m, kb, f, who, base_ev, out) || broken;
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
              x.fix = {"Reinstall the pinned version.", {fmt::format("pip install '{}'", req)}};
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
    if (py.envs.size() > k_named) x.evidence.push_back(fmt::format("and {} more environments", py.envs.size() - k_named));
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
    x.title = py.lists_cut.size() == 1
                  ? fmt::format("{} entries not inspected: {} lists {} Python environments", skipped, first.source, first.entries)
                  : fmt::format("{} entries not inspected in {} lists of Python environments", skipped, py.lists_cut.size());
    x.detail = fmt::format("cudoctor inspects the first {} entries of each list of environments, so that a directory "
                           "anyone can write to cannot make a run take minutes; a framework in an environment past "
                           "them is not reported.",
                           first.inspected);
    x.fix = {"Name the environment to inspect.", {"cudoctor --python <environment>/bin/python3"}};
    out.push_back(std::move(x));
  }
  // The python a user types is not the one that has the framework.
  const PythonEnv* path_env = nullptr;
  for (const auto& e : py.envs)
    if (!py.path_python_env.empty() && e.prefix == py.path_python_env) path_env = &e;
  if (path_env && path_env->frameworks.empty()) {
    std::vector<std::string> elsewhere;
    for (const auto& e : py.envs)
      for (const auto& f : e.frameworks)
        elsewhere.push_back(fmt::format("{} {} in {} ({})", display(f.name), f.version, e.prefix,
                                        e.interpreter.empty() ? "no interpreter" : e.interpreter));
    if (!elsewhere.empty()) {
      auto x = make_finding("python-on-path-lacks-framework");
      x.title = fmt::format("python3 on PATH ({}) has no framework; {}", py.path_python, elsewhere.front());
      x.detail = "`python3` runs an interpreter whose environment has none of the frameworks installed elsewhere, so "
                 "\"import torch\" fails or picks another copy.";
      x.evidence = {"python3 on PATH: " + py.path_python + " -> " + py.path_python_env};
      for (const auto& e : elsewhere) x.evidence.push_back("found: " + e);
      x.fix = {"Run the interpreter that has it, or activate its environment.", {}};
      for (const auto& e : py.envs)
        if (!e.frameworks.empty() && !e.interpreter.empty()) {
          x.fix.commands.push_back(e.interpreter + " -c 'import torch; print(torch.__version__)'");
          break;
        }
      out.push_back(std::move(x));
    }
  }
  return out;
}

}  // namespace cudoctor::rules
