// L3: each framework in each Python environment, against the driver, the GPU and the loader.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "cudoctor/elf/fatbin.hpp"
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

std::optional<util::Version> driver_version(const Snapshot& s) {
  if (auto v = util::Version::parse(s.driver.kernel_module.version)) return v;
  if (auto v = util::Version::parse(s.driver.nvml.driver_version)) return v;
  return std::nullopt;
}

// The GPUs' compute capabilities: NVML's, else the knowledge base's for the PCI id.
std::vector<util::Version> gpu_ccs(const Snapshot& s, const kb::KnowledgeBase& kb) {
  std::vector<util::Version> out;
  for (const auto& g : s.gpus) {
    std::optional<util::Version> cc;
    if (g.nvml) cc = util::Version::parse(g.nvml->compute_capability);
    if (!cc && !g.pci.address.empty())
      if (const auto* m = kb.gpu_by_pci_id(g.pci.device_id)) cc = m->cc;
    if (cc && std::find(out.begin(), out.end(), *cc) == out.end()) out.push_back(*cc);
  }
  return out;
}

// The install command of the newest build that fits this machine (driver, GPU), from the kb.
std::string cuda_build_command(const Snapshot& s, const kb::KnowledgeBase& kb, const std::string& name) {
  const auto* fw = kb.framework(name);
  if (!fw) return "";
  const auto driver = driver_version(s);
  const auto ccs = gpu_ccs(s, kb);
  for (const auto& r : fw->releases)
    for (const auto& v : r.variants) {
      if (driver && kb.driver_fit(*driver, v.cuda) == kb::DriverFit::too_old) continue;
      bool covers = true;
      for (const auto& cc : ccs)
        if (const auto k = kb::coverage(v, cc); k && !k->covered()) covers = false;
      if (covers) return v.install;
    }
  return "";
}

std::vector<std::string> lib_evidence(const Framework& f) {
  std::vector<std::string> ev;
  for (const auto& l : f.libraries)
    ev.push_back(fmt::format("{} -> {} ({}){}", l.soname, l.path, l.rule,
                             l.bundled.empty() || l.bundled == l.path ? "" : ", ships " + l.bundled));
  return ev;
}

}  // namespace

std::vector<Finding> framework_rules(const Snapshot& s, const kb::KnowledgeBase& kb) {
  std::vector<Finding> out;
  const auto& py = s.python;
  const bool nvidia = !s.gpus.empty() || !s.driver.kernel_module.version.empty();
  const auto driver = driver_version(s);
  const auto ccs = gpu_ccs(s, kb);
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
        const auto cmd = cuda_build_command(s, kb, f.name);
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
        const auto cmd = cuda_build_command(s, kb, f.name);
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
      if (driver && !f.cuda.empty()) {
        const auto cuda = util::Version::parse(f.cuda.find('.') == std::string::npos ? f.cuda + ".0" : f.cuda);
        if (cuda && kb.min_driver_for_cuda(*cuda) && kb.driver_fit(*driver, *cuda) == kb::DriverFit::too_old) {
          auto x = make_finding("framework-cuda-too-new-for-driver");
          const auto floor = kb.minor_compat_floor(cuda->major());
          x.title = fmt::format("{} is built for CUDA {}, which needs driver ≥ {}; this driver is {}", who, f.cuda,
                                (floor ? *floor : *kb.min_driver_for_cuda(*cuda)).str(), driver->str());
          x.detail = "CUDA initialisation fails with error 35; torch.cuda.is_available() is False.";
          x.evidence = base_ev;
          x.evidence.push_back("driver " + driver->str());
          const auto cmd = cuda_build_command(s, kb, f.name);
          x.fix = {"Upgrade the driver, or install the build for an older CUDA.", cmd.empty() ? std::vector<std::string>{"cudoctor plan"} : std::vector<std::string>{cmd, "cudoctor plan"}};
          out.push_back(std::move(x));
          broken = true;
        }
      }
      if (!f.sm_archs.empty() || !f.ptx_archs.empty()) {
        elf::Fatbin fb;
        for (const auto& a : f.sm_archs)
          fb.entries.push_back({elf::FatbinEntry::Kind::cubin, std::atoi(a.c_str() + 3), a.back() == 'a' || a.back() == 'f' ? std::string(1, a.back()) : "", false, 0, 2});
        for (const auto& a : f.ptx_archs)
          fb.entries.push_back({elf::FatbinEntry::Kind::ptx, std::atoi(a.c_str() + 8), "", false, 0, 1});
        for (const auto& cc : ccs)
          if (!elf::can_run(fb, cc.major(), cc.minor()).runs) {
            auto x = make_finding("framework-no-kernels-for-gpu");
            x.title = fmt::format("{} has no kernels for sm_{}{} (compute capability {})", who, cc.major(), cc.minor(), cc.str());
            x.detail = fmt::format("Its binaries carry {} and PTX {}: nothing that runs on this GPU. Kernels fail with "
                                   "\"no kernel image is available for execution on the device\".",
                                   f.sm_archs.empty() ? "no cubins" : fmt::format("cubins for {}", fmt::join(f.sm_archs, " ")),
                                   f.ptx_archs.empty() ? "none" : fmt::format("{}", fmt::join(f.ptx_archs, " ")));
            x.evidence = base_ev;
            const auto cmd = cuda_build_command(s, kb, f.name);
            x.fix = {"Install a build whose architecture list includes this GPU.", cmd.empty() ? std::vector<std::string>{"cudoctor plan"} : std::vector<std::string>{cmd}};
            out.push_back(std::move(x));
            broken = true;
          }
      }
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
