#pragma once
// What the L4 and L5 (runtime, computation) rules share: how they name a CUDA call, a child
// process that gave no answer, and the checks their fixes offer; and the rule families, each
// in a file of its own (runtime_rules.cpp calls them in causal order).
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules::l4 {

// The kernel log filtered for patterns, read as root where the kernel restricts it.
std::string kernel_log(const view::Machine& m, std::string_view grep_args);
// An nvidia-smi query, or nothing where nvidia-smi is not installed.
void add_smi(const view::Machine& m, std::vector<std::string>& checks, std::string_view args);
// `cudoctor plan` where this machine gives it something to plan from.
std::vector<std::string> plan_commands(const view::Machine& m);
// CUDA_VISIBLE_DEVICES values that leave no device: empty, -1 (an index that cannot exist),
// and what batch systems set for a job without GPUs (Slurm's NoDevFiles, "none").
bool hides_every_gpu(const std::string& v);
// "100 CUDA_ERROR_NO_DEVICE \"no CUDA-capable device is detected\"", named from the knowledge
// base where the library gave no name (api: driver or runtime).
std::string call_text(const snapshot::CudaCall& c, const kb::KnowledgeBase& kb, const char* api);
// "cuInit hung: no answer from <lib> (…)"; lib "" when what already names the library.
std::string outcome_title(const snapshot::ChildOutcome& o, const std::string& what_alone, const std::string& lib);
// Values that cannot be true, as a finding in place of the healthy one.
Finding implausible(FindingId id, const std::string& who, const std::string& lib, const std::vector<std::string>& bad);
// "12.4" for 12040; "none" for 0 or less.
std::string cuda_str(int encoded);

// cuda-driver-failed, cuda-stub-driver, cuda-no-device or cuda-no-device-no-gpu,
// cuda-init-unknown-error, cuda-forward-compat-unsupported, cuda-init-failed,
// cuda-driver-implausible, cuda-context-failed, cuda-driver-ok and gpu-count-nvml-vs-cuda
// (l4_driver_api.cpp).
void driver_api_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// Per CUDA runtime: cuda-runtime-failed, cuda-runtime-implausible, runtime-without-driver,
// runtime-too-new-for-driver, cuda-stub-driver, cuda-no-device, cuda-runtime-ok (l4_cudart.cpp).
void cudart_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// L5, per GPU: compute-failed, gpu-out-of-memory, copy-corrupted, gemm-failed,
// gemm-wrong-result, copy-bandwidth-low, compute-ok (l5_compute.cpp).
void compute_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out);

}  // namespace cudoctor::rules::l4
