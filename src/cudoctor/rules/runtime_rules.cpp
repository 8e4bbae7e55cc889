// L4 and L5: what the driver API, each CUDA runtime and the computation check answered, family
// by family (l4_driver_api.cpp, l4_cudart.cpp, l5_compute.cpp).
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l4_view.hpp"
#include "cudoctor/rules/rules.hpp"

namespace cudoctor::rules {
namespace {

using l4::add_smi;
using l4::hides_every_gpu;

// CUDA_VISIBLE_DEVICES set to hide every GPU, from the facts alone (L4 need not have run);
// not when the driver API's cuda-no-device already names it as the cause.
void visible_devices_rule(const view::Machine& m, std::vector<Finding>& out) {
  const auto& cvd = m.snap.runtime.cuda_visible_devices;
  if (!cvd || !hides_every_gpu(*cvd)) return;
  for (const auto& f : out)
    if (f.id == "cuda-no-device" && f.title.starts_with("CUDA_VISIBLE_DEVICES=")) return;
  auto f = make_finding("cuda-visible-devices-hides-gpus");
  f.title = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides every GPU", *cvd);
  f.detail =
      "An empty or invalid CUDA_VISIBLE_DEVICES makes the CUDA driver report no device to every program started "
      "with it, whatever the machine has: torch.cuda.is_available() is False.";
  f.evidence.push_back(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" (environment)", *cvd));
  f.fix = {"Unset it, or list the GPUs to use (indices or UUIDs).", {"unset CUDA_VISIBLE_DEVICES"}, {}};
  add_smi(m, f.fix.checks, "-L");
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> runtime_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& s = m.snap;
  std::vector<Finding> out;
  if (!s.runtime.ran) {
    if (!s.runtime.not_run_reason.empty()) {
      auto f = make_finding("runtime-not-run");
      f.title = "L4 and L5 not run: " + s.runtime.not_run_reason;
      out.push_back(std::move(f));
    }
    visible_devices_rule(m, out);
    return out;
  }
  l4::driver_api_rules(m, kb, out);
  l4::cudart_rules(m, kb, out);
  l4::compute_rules(m, kb, out);
  if (s.runtime.compute.empty()) {
    auto f = make_finding("compute-not-run");
    f.title = s.runtime.driver_api.devices.empty()
                  ? "Computation check not run: no CUDA device answered"
                  : "Computation check not run: no CUDA runtime works with this driver";
    out.push_back(std::move(f));
  }
  visible_devices_rule(m, out);
  return out;
}

}  // namespace cudoctor::rules
