#pragma once
// Whether one framework build (a CUDA version and its kernels) runs on one machine (a compute
// capability and a driver), and if not, what stops it. The one judgement `plan` shows for every
// build of the knowledge base and `check` applies to every build it finds installed.
#include <optional>
#include <string>

#include "cudoctor/compat/binary.hpp"
#include "cudoctor/kb/kb.hpp"

namespace cudoctor::plan {

enum class Fit { works, works_compat, no };

// What stops a build, when something does.
enum class Stop {
  none,
  kernels,         // no cubin or PTX for this GPU
  ptx_jit,         // only PTX covers the GPU, and the driver cannot JIT it (or JIT is off)
  gpu_branch,      // the runtime needs a driver newer than the GPU's last branch
  driver_vs_gpu,   // the driver cannot run this GPU at all
  driver_too_old,  // the driver is too old for the build's CUDA
};

struct Machine {
  std::optional<util::Version> cc;      // the GPU's compute capability
  std::optional<util::Version> driver;  // the driver's version
  bool jit_disabled = false;            // CUDA_DISABLE_PTX_JIT=1
};

struct BuildFit {
  Fit fit = Fit::works;
  Stop stop = Stop::none;
  // How the GPU runs the build's kernels; nullopt when the GPU or the kernels are unknown.
  std::optional<compat::Verdict> kernels;
  bool kernels_unknown = false;                // a GPU is known, the build's kernels are not
  bool toolkit_bound = false;                  // no kernel list: judged by what its CUDA can compile
  util::Version need;                          // the driver the build needs on this GPU
  std::optional<util::Version> native;         // the driver that runs the build's CUDA natively
  std::optional<util::Version> unlock_driver;  // when only the driver stops it
  std::string why;                             // a phrase: "needs driver ≥ 580.65.06"; "" when it simply works
};

// kernels: the build's targets (its binaries' fatbins, or its published list); nullopt when
// unknown, in which case what a CUDA toolkit can compile for the GPU bounds the answer: that of
// compile_cuda for a build that compiles with the newest CUDA it accepts (CuPy), else `cuda`.
BuildFit fit_build(const kb::KnowledgeBase& kb, const Machine& m, const util::Version& cuda,
                   const std::optional<kb::Kernels>& kernels,
                   const std::optional<util::Version>& compile_cuda = std::nullopt);

// Why this driver runs no CUDA at all on this GPU, "" when it can (kb::driver_vs_cc in words).
std::string driver_vs_gpu_text(const kb::KnowledgeBase& kb, const util::Version& driver, const util::Version& cc);

// "sm_89" for 8.9.
std::string sm(const util::Version& cc);

}  // namespace cudoctor::plan
