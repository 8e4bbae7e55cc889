#include "cudoctor/plan/fit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cudoctor::plan {
namespace {

std::string list(const kb::Kernels& k) {
  if (k.min_cc) return "≥ " + sm(*k.min_cc);
  std::string s;
  for (const auto& t : k.targets)
    if (t.kind == compat::Target::Kind::cubin) s += (s.empty() ? "" : " ") + sm(t.cc());
  for (const auto& t : k.targets)
    if (t.kind == compat::Target::Kind::ptx) s += (s.empty() ? "" : " ") + std::string("+PTX ") + sm(t.cc());
  return s;
}

}  // namespace

std::string sm(const util::Version& cc) {
  return fmt::format("sm_{}{}", cc.major(), cc.minor());
}

std::string driver_vs_gpu_text(const kb::KnowledgeBase& kb, const util::Version& driver, const util::Version& cc) {
  const auto d = kb.driver_vs_cc(driver, cc);
  if (!d) return "";
  const auto* a = kb.architecture_of(cc);
  const auto arch = a ? a->name : std::string("these");
  if (d->too_old)
    return fmt::format("driver {} is older than any that runs {} GPUs ({} needs ≥ {})", driver.str(), arch, sm(cc),
                       d->need->str());
  return fmt::format("driver {} no longer supports {} GPUs: R{} is the last branch that does", driver.str(), arch,
                     *d->last_branch);
}

BuildFit fit_build(const kb::KnowledgeBase& kb, const Machine& m, const util::Version& cuda,
                   const std::optional<kb::Kernels>& kernels, const std::optional<util::Version>& compile_cuda) {
  BuildFit b;
  const auto native = kb.min_driver_for_cuda(cuda);
  const auto floor = kb.minor_compat_floor(cuda.major());
  b.native = native;
  std::optional<int> last_branch;
  std::optional<util::Version> gpu_min_driver;
  bool ptx_only = false;
  if (m.cc) {
    if (const auto* a = kb.architecture_of(*m.cc)) last_branch = a->last_driver_branch;
    gpu_min_driver = kb.min_driver_for_cc(*m.cc);
    if (kernels) {
      b.kernels = kb::runs_on(*kernels, *m.cc, true);
      if (!b.kernels->runs()) {
        b.fit = Fit::no;
        b.stop = Stop::kernels;
        b.why = fmt::format("no kernels for {} (built for {})", sm(*m.cc), list(*kernels));
        return b;
      }
    } else {
      // No list: the build holds at most what its toolkit could compile.
      b.toolkit_bound = true;
      const auto& compiler = compile_cuda ? *compile_cuda : cuda;
      const auto bound = compat::runs_on(kb.toolkit_targets(compiler), *m.cc);
      if (!bound.runs()) {
        b.fit = Fit::no;
        b.stop = Stop::kernels;
        b.why = fmt::format("no kernels for {}: CUDA {} cannot compile for it", sm(*m.cc), compiler.str());
        return b;
      }
      b.kernels_unknown = true;
    }
    ptx_only = b.kernels && b.kernels->how == compat::How::ptx_jit;
    if (ptx_only && m.jit_disabled) {
      b.fit = Fit::no;
      b.stop = Stop::ptx_jit;
      b.why = fmt::format("reaches {} only through {} PTX, and CUDA_DISABLE_PTX_JIT=1 turns JIT off", sm(*m.cc),
                          b.kernels->via->name());
      return b;
    }
  }
  if (!native) {
    b.fit = Fit::no;
    b.stop = Stop::driver_too_old;
    b.why = fmt::format("CUDA {} is not in the knowledge base", cuda.str());
    return b;
  }
  // The driver this build needs here: the GPU's own floor, then the runtime's (native when
  // only PTX covers the GPU: minor-version compatibility cannot JIT it).
  b.need = (ptx_only || !floor) ? *native : *floor;
  if (gpu_min_driver) b.need = std::max(b.need, *gpu_min_driver);
  if (last_branch && b.need.major() > *last_branch) {
    b.fit = Fit::no;
    b.stop = Stop::gpu_branch;
    b.why = fmt::format("needs driver ≥ {}, newer than R{}, the last branch for {} GPUs", b.need.str(), *last_branch,
                        kb.architecture_of(*m.cc)->name);
    return b;
  }
  if (!m.driver) {
    b.why = fmt::format("needs driver ≥ {}", b.need.str());
    return b;
  }
  if (m.cc)
    if (const auto d = kb.driver_vs_cc(*m.driver, *m.cc)) {
      b.fit = Fit::no;
      b.stop = Stop::driver_vs_gpu;
      b.why = driver_vs_gpu_text(kb, *m.driver, *m.cc);
      if (d->too_old) b.unlock_driver = b.need;
      return b;
    }
  switch (kb.driver_fit(*m.driver, cuda)) {
    case kb::DriverFit::native:
      break;
    case kb::DriverFit::minor_compat:
      if (ptx_only) {
        b.fit = Fit::no;
        b.stop = Stop::ptx_jit;
        b.why =
            fmt::format("reaches {} only through PTX, which minor-version compatibility cannot JIT; needs driver ≥ {}",
                        sm(*m.cc), native->str());
        b.unlock_driver = *native;
      } else {
        b.fit = Fit::works_compat;
        b.why = fmt::format("through minor-version compatibility (driver ≥ {} for full support)", native->str());
      }
      break;
    case kb::DriverFit::too_old:
      b.fit = Fit::no;
      b.stop = Stop::driver_too_old;
      b.why = fmt::format("needs driver ≥ {}", b.need.str());
      b.unlock_driver = b.need;
      break;
  }
  return b;
}

}  // namespace cudoctor::plan
