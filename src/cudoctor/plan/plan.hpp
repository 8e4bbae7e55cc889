#pragma once
// The planner: from a GPU (compute capability) and a driver, which CUDA toolkits and which
// framework builds will run, which will not and why, and which upgrade unlocks more.
// A pure function of its inputs and the knowledge base.
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/plan/fit.hpp"

namespace cudoctor::plan {

struct Inputs {
  std::string gpu;                  // what the user or the machine calls it, "" unknown
  std::optional<util::Version> cc;  // compute capability
  std::optional<util::Version> driver;
  std::string framework;                // "" all, else "torch", "tensorflow", "jax", "cupy", "onnxruntime"
  std::string framework_version;        // "" all, else a release prefix ("2.5")
  std::string gpu_source;               // where the GPU came from: "--gpu", "NVML", "pci.ids"
  std::string driver_source;            // "--driver", "/proc/driver/nvidia/version", …
  std::optional<util::Version> python;  // the Python the build is for (3.11); builds with no wheel for it do not fit
  bool toolkits = true;                 // false: judge the framework builds only
};

struct ToolkitLine {
  util::Version cuda;  // major.minor
  Fit fit = Fit::no;
  std::string why;                      // for works_compat and no, and how code built with it runs on the GPU
  compat::How how = compat::How::none;  // how its best target runs on the GPU, none when unknown
};

struct BuildLine {
  std::string framework;  // "torch"
  std::string display;    // "PyTorch"
  std::string release;    // "2.5"
  util::Version cuda;
  std::string install;
  Fit fit = Fit::no;
  std::string why;
  bool arch_unknown = false;                   // the build's arch list is not published, nor inferable
  std::string arch_inferred_from;              // the build whose published list stood in for this one's
  bool why_no_toolkit = false;                 // no list at all, but its CUDA cannot compile for the GPU
  bool arch_unverified = false;                // the arch list is not from the release itself
  bool no_wheel_for_python = false;            // the release publishes no wheel for Inputs::python
  bool ptx_only = false;                       // runs this GPU through PTX JIT only
  std::string runs_via;                        // "sm_86 cubin": the kernels the GPU runs, "" unknown or none
  bool same_major_cubin = false;               // runs through an older cubin of the GPU's major (sm_86 on sm_89)
  std::optional<util::Version> unlock_driver;  // the driver that would make it run, when only the driver stops it
  bool best_of_release = false;  // the release's build to show: native over compat over none, then newest CUDA
  std::string status;            // the release's status in the knowledge base (kb::k_statuses)
};

struct Unlock {
  util::Version driver;
  std::string what;  // "CUDA 13.0 builds: PyTorch 2.9-2.14 cu130, JAX cuda13"
};

struct Plan {
  Inputs in;
  std::string architecture;                      // "Ada Lovelace", "" unknown
  std::optional<util::Version> gpu_min_driver;   // the oldest driver that runs this GPU
  std::optional<int> gpu_last_branch;            // the newest driver branch that still supports it
  std::optional<util::Version> driver_max_cuda;  // natively; unset when the driver is beyond the knowledge base
  // The driver is newer than every branch in the knowledge base: it supports at least this CUDA natively.
  std::optional<util::Version> driver_cuda_at_least;
  std::string kb_date;  // the knowledge base's date, for what it does not know
  std::optional<util::Version> driver_compat_major_floor;
  bool driver_runs_gpu = true;        // false: nothing can run until the driver changes
  std::string headline;               // one sentence
  std::vector<ToolkitLine> toolkits;  // newest first, one per CUDA minor
  std::vector<BuildLine> builds;      // frameworks in kb order, releases newest first
  std::vector<Unlock> unlocks;        // smallest driver first
  std::vector<std::string> notes;
};

Plan make_plan(const Inputs& in, const kb::KnowledgeBase& kb);

// The build to install: the newest release with a variant that runs natively, else the
// newest that runs through minor-version compatibility; within a release, its newest CUDA.
// nullptr when none runs.
const BuildLine* recommended(const Plan& p);
// Whether some framework build runs (`plan` exits 0), natively or through compatibility.
bool runs_any(const Plan& p);
// The recommended build of one framework for a machine with these GPUs (every one must run
// it) and this driver; nullptr when none runs or the framework is unknown.
std::optional<BuildLine> recommended(const kb::KnowledgeBase& kb, const std::string& framework,
                                     const std::vector<util::Version>& ccs, const std::optional<util::Version>& driver,
                                     const std::optional<util::Version>& python = std::nullopt);

}  // namespace cudoctor::plan

namespace cudoctor::snapshot {
struct Snapshot;
}

namespace cudoctor::plan {

// The plan's inputs as this machine's snapshot gives them: the first NVIDIA GPU (NVML's
// compute capability, else the knowledge base's for its PCI id) and the driver (kernel
// module, else NVML, else libcuda's file name). Fields stay empty when unknown.
Inputs inputs_from_snapshot(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);

}  // namespace cudoctor::plan
