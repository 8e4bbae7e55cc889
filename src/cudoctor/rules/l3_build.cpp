// L3: a framework's build against this machine: a ROCm or CPU-only build, the CUDA and kernels
// it was built with against the driver and GPUs (plan::fit_build, the judgement `plan` shows),
// and the nvidia-* wheels it pins.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/compat/binary.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l3_view.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules::l3 {
namespace {

// The install command of the build `plan` recommends for this machine: the same judgement, for
// every GPU here (a build that runs on one GPU but not another is not recommended), and only
// releases with a wheel for the environment's Python.
std::string cuda_build_command(const FrameworkView& v) {
  if (!v.kb.framework(v.f.name)) return "";
  const auto b = plan::recommended(v.kb, v.f.name, v.m.ccs, v.m.driver.version, v.m.python_version(v.env));
  return b ? b->install : "";
}

// The kernels found in the framework's own binaries, nullopt when none were read.
std::optional<kb::Kernels> found_kernels(const snapshot::Framework& f) {
  if (f.sm_archs.empty() && f.ptx_archs.empty()) return std::nullopt;
  kb::Kernels k;
  for (const auto* list : {&f.sm_archs, &f.ptx_archs})
    for (const auto& a : *list)
      if (const auto t = compat::parse_target(a)) k.targets.push_back(*t);
  return k;
}

// Its binaries carry nothing that runs on this GPU.
void no_kernels_rule(const FrameworkView& v, const util::Version& gpu, const std::vector<std::string>& install,
                     std::vector<Finding>& out) {
  const auto& f = v.f;
  auto x = make_finding("framework-no-kernels-for-gpu");
  x.title = fmt::format("{} has no kernels for {} (compute capability {})", v.who, plan::sm(gpu), gpu.str());
  x.detail = fmt::format(
      "Its binaries carry {} and PTX {}: nothing that runs on this GPU. Kernels fail with "
      "\"no kernel image is available for execution on the device\".",
      f.sm_archs.empty() ? "no cubins" : fmt::format("cubins for {}", fmt::join(f.sm_archs, " ")),
      f.ptx_archs.empty() ? "none" : fmt::format("{}", fmt::join(f.ptx_archs, " ")));
  x.evidence = v.base_ev;
  x.fix = {install_text(v, "Install a build whose architecture list includes this GPU"), install};
  out.push_back(std::move(x));
}

// Only PTX reaches this GPU, and the driver cannot JIT-compile it.
void ptx_jit_rule(const FrameworkView& v, const util::Version& gpu, const plan::BuildFit& fit,
                  const std::vector<std::string>& install, std::vector<Finding>& out) {
  const auto& m = v.m;
  auto x = make_finding("framework-ptx-jit-unavailable");
  x.title = fmt::format("{} {}", v.who, fit.why);
  x.detail = fmt::format(
      "Its binaries have no cubin for {}, only PTX, which the driver must JIT-compile when the "
      "program loads. Kernels fail with \"the provided PTX was compiled with an unsupported "
      "toolchain\" or \"no kernel image is available\".",
      plan::sm(gpu));
  x.evidence = v.base_ev;
  x.evidence.push_back(fmt::format(
      "{}; driver {}",
      fit.kernels && fit.kernels->ptx_denied ? "PTX " + fit.kernels->ptx_denied->name() : std::string("PTX only"),
      m.driver.version ? m.driver.version->str() : "?"));
  const auto cubins = fmt::format("install a build with cubins for {}", plan::sm(gpu));
  x.fix = {fit.unlock_driver
               ? fmt::format("Upgrade the driver to ≥ {}, or {}", fit.unlock_driver->str(), install_text(v, cubins))
               : install_text(v, "I" + cubins.substr(1)),
           install};
  out.push_back(std::move(x));
}

// The framework's CUDA needs a newer driver than this one, or than the GPU's last branch.
void driver_rule(const FrameworkView& v, const plan::BuildFit& fit, const std::vector<std::string>& install,
                 std::vector<Finding>& out) {
  const auto& m = v.m;
  const auto& f = v.f;
  const bool branch = fit.stop == plan::Stop::gpu_branch;
  auto x = make_finding(branch ? FindingId("framework-cuda-beyond-gpu-branch")
                               : FindingId("framework-cuda-too-new-for-driver"));
  x.title = branch ? fmt::format("{} is built for CUDA {}, which {}", v.who, f.cuda, fit.why)
                   : fmt::format("{} is built for CUDA {}, which needs driver ≥ {}; this driver is {}", v.who, f.cuda,
                                 fit.need.str(), m.driver.version->str());
  x.detail = "CUDA initialisation fails with error 35; torch.cuda.is_available() is False.";
  x.evidence = v.base_ev;
  if (m.driver.version)
    x.evidence.push_back(fmt::format("driver {} ({})", m.driver.version->str(), view::to_string(m.driver.witness)));
  x.fix = {branch ? install_text(v, "Install a build for a CUDA that this GPU's last driver branch supports")
                  : "Upgrade the driver, or " + install_text(v, "install the build for a CUDA this driver runs"),
           install};
  out.push_back(std::move(x));
}

}  // namespace

std::string install_text(const FrameworkView& v, const std::string& what) {
  const auto& f = v.f;
  switch (v.m.env_kind(v.env)) {
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

// fixes::pip_install of the recommended build's line.
std::vector<std::string> install_commands(const FrameworkView& v) {
  const auto line = cuda_build_command(v);
  if (line.empty()) return {};
  return fixes::pip_install(v.m, v.env, &v.f, line);
}

bool rocm_build_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& s = v.m.snap;
  const bool nvidia = !s.gpus.empty() || !s.driver.kernel_module.version.empty();
  if (v.f.hip.empty() || !nvidia) return false;
  auto x = make_finding("framework-rocm-build");
  x.title = fmt::format("{} is a ROCm (AMD) build", v.who);
  x.detail = "A ROCm build drives AMD GPUs through HIP; it cannot use an NVIDIA GPU.";
  x.evidence = v.base_ev;
  x.fix = {install_text(v, "Install a CUDA build"), install_commands(v)};
  out.push_back(std::move(x));
  return true;
}

bool cpu_only_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  const auto& env = v.env;
  if (!f.cuda.empty() || (f.name != "torch" && f.name != "tensorflow" && f.name != "jax")) return false;
  auto x = make_finding("cpu-only-build");
  x.title = fmt::format("{} is a CPU-only build", v.who);
  x.detail = f.name == "torch"
                 ? "torch.cuda.is_available() is False and CUDA calls raise \"Torch not compiled with CUDA "
                   "enabled\", whatever the GPU and driver."
                 : "It was built without CUDA, so it never uses a GPU.";
  const auto kind = v.m.env_kind(env);
  if (kind == view::EnvKind::system)
    x.detail += " It comes from the distribution's package, which is built for the CPU.";
  else if (f.inherited)
    x.detail += fmt::format(
        " It comes from {}'s site-packages, which this venv imports "
        "(include-system-site-packages = true).",
        env.base_prefix.empty() ? std::string("the base interpreter") : env.base_prefix);
  x.evidence = v.base_ev;
  if (f.inherited) x.evidence.push_back(fmt::format("{}/pyvenv.cfg: include-system-site-packages = true", env.prefix));
  const auto cmds = install_commands(v);
  x.fix = {install_text(v, "Install a CUDA build that fits this machine") +
               (cmds.empty() ? " None in the knowledge base runs here; cudoctor plan says why." : ""),
           cmds};
  out.push_back(std::move(x));
  return true;
}

bool build_rules(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& m = v.m;
  const auto& f = v.f;
  if (f.cuda.empty()) return false;
  const auto cuda = util::Version::parse(f.cuda.find('.') == std::string::npos ? f.cuda + ".0" : f.cuda);
  if (!cuda || !v.kb.min_driver_for_cuda(*cuda)) return false;
  const auto kernels = found_kernels(f);
  std::vector<util::Version> ccs = m.ccs;
  if (ccs.empty()) ccs.emplace_back();  // no GPU known: the driver alone
  bool driver_reported = false;
  bool broken = false;
  for (const auto& cc : ccs) {
    const std::optional<util::Version> gpu = cc.parts.empty() ? std::nullopt : std::optional(cc);
    auto fit = plan::fit_build(v.kb, plan::Machine{gpu, m.driver.version, m.jit_disabled}, *cuda,
                               gpu ? kernels : std::nullopt);
    // Without its binaries' kernels, only the driver's half of the judgement is a fact.
    if (fit.stop == plan::Stop::kernels && !kernels)
      fit = plan::fit_build(v.kb, plan::Machine{std::nullopt, m.driver.version, m.jit_disabled}, *cuda, std::nullopt);
    const auto install = fit.stop == plan::Stop::none ? std::vector<std::string>() : install_commands(v);
    switch (fit.stop) {
      case plan::Stop::none:
      case plan::Stop::driver_vs_gpu:
        break;  // L1 reports a driver that cannot run the GPU
      case plan::Stop::kernels:
        // Only what its binaries show: without them, what its CUDA can compile is a bound, not a fact.
        if (!kernels) break;
        no_kernels_rule(v, *gpu, install, out);
        broken = true;
        break;
      case plan::Stop::ptx_jit:
        ptx_jit_rule(v, *gpu, fit, install, out);
        broken = true;
        break;
      case plan::Stop::gpu_branch:
      case plan::Stop::driver_too_old:
        if (driver_reported) break;
        driver_reported = true;
        driver_rule(v, fit, install, out);
        broken = true;
        break;
    }
  }
  return broken;
}

// A bundled nvidia-* wheel older than the framework's pin.
void pins_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  for (const auto& req : f.requires_nvidia) {
    const auto eq = req.find("==");
    if (eq == std::string::npos) continue;
    auto want_name = req.substr(0, eq);
    for (auto& ch : want_name) ch = ch == '-' ? '_' : ch;
    const auto want = util::Version::parse(req.substr(eq + 2));
    for (const auto& [name, version] : v.env.nvidia_packages)
      if (name == want_name && want) {
        const auto have = util::Version::parse(version);
        if (have && *have < *want) {
          auto x = make_finding("framework-library-older");
          x.title = fmt::format("{} pins {} but {} is installed", v.who, req, version);
          x.fix = {"Reinstall the pinned version.",
                   v.m.env_kind(v.env) == view::EnvKind::system || f.inherited
                       ? std::vector<std::string>{}
                       : fixes::pip_install(v.m, v.env, nullptr, "pip install " + fixes::shell_quote(req))};
          out.push_back(std::move(x));
        }
      }
  }
}

}  // namespace cudoctor::rules::l3
