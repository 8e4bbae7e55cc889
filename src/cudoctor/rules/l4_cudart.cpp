// L4: what each CUDA runtime (libcudart, run in a child process) answered against the driver.
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l4_view.hpp"
#include "cudoctor/rules/plausible.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules::l4 {
namespace {

using snapshot::CudartFacts;

// Error 35 with a driver present: the runtime is newer than the driver supports.
void too_new_rule(const view::Machine& m, const kb::KnowledgeBase& kb, const CudartFacts& c, const std::string& who,
                  const std::string& evidence, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const auto rt = cuda_str(c.runtime_version);
  auto f = make_finding("runtime-too-new-for-driver");
  f.title =
      fmt::format("{} is newer than the driver, which supports CUDA {}: error 35", who, cuda_str(c.driver_version));
  const auto runtime = util::Version::parse(rt);
  const auto need = runtime ? kb.min_driver_for_cuda(*runtime) : std::nullopt;
  const auto floor = runtime ? kb.minor_compat_floor(runtime->major()) : std::nullopt;
  f.detail = fmt::format("A CUDA {} runtime needs a driver for CUDA {} or newer{}. The driver reports CUDA {}.", rt, rt,
                         floor ? fmt::format(" (≥ {} natively, any {}.x from ≥ {})", need ? need->str() : "?",
                                             runtime->major(), floor->str())
                               : "",
                         cuda_str(c.driver_version));
  f.evidence.push_back(evidence);
  if (!s.driver.kernel_module.version.empty())
    f.evidence.push_back(fmt::format("kernel module {}", s.driver.kernel_module.version));
  f.fix = {fmt::format("Upgrade the driver to ≥ {}, or use a build for CUDA {} or older.",
                       (floor ? *floor : need.value_or(util::Version{})).str(), cuda_str(c.driver_version)),
           plan_commands(m)};
  out.push_back(std::move(f));
}

// What cudaGetDeviceCount and cudaSetDevice answered.
void answer_rules(const view::Machine& m, const kb::KnowledgeBase& kb, const CudartFacts& c, const std::string& who,
                  const std::string& evidence, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const int code = c.device_count_call.code;
  if (code == 35 && (c.driver_library.empty() || c.driver_version == 0)) {
    auto f = make_finding("runtime-without-driver");
    f.title = fmt::format("{} finds no CUDA driver: error 35", who);
    f.detail =
        "Error 35 (cudaErrorInsufficientDriver) here means there is no driver at all: no libcuda.so.1 for the "
        "runtime to load. It does not mean a driver that is too old.";
    f.evidence.push_back(evidence);
    f.evidence.emplace_back("libcuda.so.1: not found by the loader");
    f.fix = {"Install the NVIDIA driver (or, in a container, start it with the GPU and driver passed in).",
             plan_commands(m)};
    out.push_back(std::move(f));
  } else if (code == 35) {
    too_new_rule(m, kb, c, who, evidence, out);
  } else if (code == 34) {
    auto f = make_finding("cuda-stub-driver");
    f.title = fmt::format("{} loaded the toolkit's stub libcuda: error 34", who);
    f.detail = "The runtime found the stub libcuda.so from a toolkit's lib/stubs, not the driver's.";
    f.evidence.push_back(evidence);
    f.fix = {"Remove the stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d.", {fixes::as_root(m, "ldconfig")}};
    out.push_back(std::move(f));
  } else if (code == 100) {
    if (s.runtime.driver_api.init.code == 100) return;  // the driver API finding says it
    auto f = make_finding("cuda-no-device");
    f.title = fmt::format("{}: no CUDA device", who);
    f.evidence.push_back(evidence);
    out.push_back(std::move(f));
  } else if (code != 0) {
    auto f = make_finding("cuda-runtime-failed");
    f.title = fmt::format("{}: cudaGetDeviceCount = {}", who, call_text(c.device_count_call, kb, "runtime"));
    if (const auto* e = kb.cuda_error("runtime", code)) f.detail = e->meaning + kb::causes_text(*e);
    f.evidence.push_back(evidence);
    out.push_back(std::move(f));
  } else if (c.set_device.code > 0) {
    auto f = make_finding("cuda-runtime-failed");
    f.title = fmt::format("{}: cudaSetDevice(0) = {}", who, call_text(c.set_device, kb, "runtime"));
    if (const auto* e = kb.cuda_error("runtime", c.set_device.code)) f.detail = e->meaning;
    f.evidence.push_back(evidence);
    out.push_back(std::move(f));
  } else {
    auto f = make_finding("cuda-runtime-ok");
    f.title = fmt::format("{}: {} device{}", who, c.device_count, c.device_count == 1 ? "" : "s");
    f.evidence.push_back(evidence);
    out.push_back(std::move(f));
  }
}

void one_cudart(const view::Machine& m, const kb::KnowledgeBase& kb, const CudartFacts& c, std::vector<Finding>& out) {
  const auto rt = cuda_str(c.runtime_version);
  // Named by its version when it reported one, else by its file.
  const bool known = c.runtime_version > 0 && plausible_cuda_version(c.runtime_version);
  const auto who = known ? fmt::format("CUDA runtime {} ({})", rt, c.origin)
                         : fmt::format("CUDA runtime at {} ({})", c.library, c.origin);
  if (c.outcome.status != snapshot::ChildStatus::ok) {
    auto f = make_finding("cuda-runtime-failed");
    f.title = outcome_title(c.outcome, who, known ? c.library : "");
    f.evidence.push_back(
        fmt::format("child process: {}: {}", snapshot::to_string(c.outcome.status), c.outcome.message));
    out.push_back(std::move(f));
    return;
  }
  if (const auto bad = implausible_cudart(c); !bad.empty()) {
    out.push_back(
        implausible("cuda-runtime-implausible", fmt::format("The CUDA runtime ({})", c.origin), c.library, bad));
    return;
  }
  const auto evidence =
      fmt::format("{}: cudaRuntimeGetVersion = {} ({}), cudaDriverGetVersion = {} ({}), cudaGetDeviceCount = {}",
                  c.library, c.runtime_version, rt, c.driver_version, cuda_str(c.driver_version),
                  call_text(c.device_count_call, kb, "runtime"));
  answer_rules(m, kb, c, who, evidence, out);
}

}  // namespace

void cudart_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  for (const auto& c : m.snap.runtime.cudarts) one_cudart(m, kb, c, out);
}

}  // namespace cudoctor::rules::l4
