// L4: what the CUDA driver API (libcuda, run in a child process) answered: a failed child, a
// stub library, cuInit's error, values that cannot be true, or the devices and their contexts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l4_view.hpp"
#include "cudoctor/rules/plausible.hpp"

namespace cudoctor::rules::l4 {
namespace {

using DriverApi = snapshot::DriverApiFacts;
using snapshot::Snapshot;

// NVML and the driver API count the same GPUs unless CUDA_VISIBLE_DEVICES narrows the
// driver's view or MIG is on (CUDA then enumerates MIG instances).
void count_rule(const view::Machine& m, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const auto& d = s.runtime.driver_api;
  const auto& n = s.driver.nvml;
  if (s.runtime.cuda_visible_devices || n.outcome.status != snapshot::ChildStatus::ok || n.init_code != 0 ||
      d.device_count < 0)
    return;
  int nvml = 0;
  for (const auto& g : s.gpus)
    if (g.nvml) {
      if (g.nvml->mig_mode == "enabled") return;
      ++nvml;
    }
  if (nvml == d.device_count) return;
  auto f = make_finding("gpu-count-nvml-vs-cuda");
  f.title = fmt::format("NVML lists {} GPU{} but the CUDA driver API {}", nvml, nvml == 1 ? "" : "s", d.device_count);
  f.detail =
      "With CUDA_VISIBLE_DEVICES unset and MIG off both count the same GPUs: CUDA cannot open some GPU (its "
      "device node, a cgroup that denies it), or one of the two libraries answered wrongly.";
  f.evidence = {fmt::format("{}: nvmlDeviceGetCount = {}", n.library, nvml),
                fmt::format("{}: cuDeviceGetCount = {}", d.library, d.device_count)};
  f.fix = {"Compare what each sees.", {}, {}};
  add_smi(m, f.fix.checks, "-L");
  f.fix.checks.emplace_back("ls -l /dev/nvidia*");
  out.push_back(std::move(f));
}

bool node_present(const Snapshot& s, const char* path) {
  for (const auto& n : s.driver.device_nodes)
    if (n.path == path) return n.type != snapshot::NodeType::missing;
  return false;
}

// The child crashed, hung or exited inside the driver.
void driver_failed_rule(const view::Machine& m, const DriverApi& d, std::vector<Finding>& out) {
  auto f = make_finding("cuda-driver-failed");
  const bool in_init = d.outcome.last_call.empty() || d.outcome.last_call == "cuInit";
  f.title = outcome_title(d.outcome, in_init ? "cuInit" : "The CUDA driver API", d.library);
  f.detail =
      "cudoctor ran the driver in a separate process, so the report is whole; every CUDA program on this "
      "machine will fail the same way.";
  f.evidence.push_back(fmt::format("child process: {} after {:.2f} s: {}", snapshot::to_string(d.outcome.status),
                                   d.outcome.seconds, d.outcome.message));
  f.fix = {
      "Reinstall the driver, and read the kernel log for NVRM or Xid errors.", {}, {kernel_log(m, "-e NVRM -e xid")}};
  out.push_back(std::move(f));
}

// The toolkit's stub libcuda answers every call with 34.
void stub_driver_rule(const view::Machine& m, const DriverApi& d, const std::string& evidence,
                      std::vector<Finding>& out) {
  auto f = make_finding("cuda-stub-driver");
  f.title = fmt::format("libcuda.so.1 is the toolkit's stub: {}", d.library);
  f.detail =
      "The CUDA toolkit ships a stub libcuda.so in lib/stubs for linking only; loaded at run time it answers "
      "every call with error 34. A path to the stubs directory on LD_LIBRARY_PATH or in ld.so.conf puts it "
      "ahead of the real driver.";
  f.evidence.push_back(evidence);
  f.fix = {"Remove the stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d, then refresh the loader cache.",
           {fixes::as_root(m, "ldconfig")},
           {"echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n stubs", "grep -rn stubs /etc/ld.so.conf.d/"}};
  out.push_back(std::move(f));
}

// cuInit returned 100: CUDA_VISIBLE_DEVICES hides the GPUs, or there is none.
void no_device_rule(const view::Machine& m, const std::string& evidence, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const auto& cvd = s.runtime.cuda_visible_devices;
  auto f = make_finding(!cvd && s.gpus.empty() ? FindingId("cuda-no-device-no-gpu") : FindingId("cuda-no-device"));
  f.evidence.push_back(evidence);
  if (cvd) f.evidence.push_back(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\"", *cvd));
  if (cvd && hides_every_gpu(*cvd)) {
    f.title = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides every GPU", *cvd);
    f.detail = "An empty or invalid CUDA_VISIBLE_DEVICES makes the driver report no device, whatever the machine has.";
    f.fix = {"Unset it, or list the GPUs to use (indices or UUIDs).", {"unset CUDA_VISIBLE_DEVICES"}, {}};
    add_smi(m, f.fix.checks, "-L");
  } else if (cvd) {
    f.title = fmt::format("No CUDA device: CUDA_VISIBLE_DEVICES=\"{}\" names none of this machine's GPUs", *cvd);
    f.detail =
        "The driver lists only the GPUs CUDA_VISIBLE_DEVICES names; an index past the last GPU, or a UUID of "
        "another machine's GPU, leaves none.";
    f.fix = {"Set it to indices or UUIDs that exist.", {}, {}};
    add_smi(m, f.fix.checks, "-L");
  } else {
    f.detail = "The driver loaded but sees no GPU it can use.";
    if (s.gpus.empty()) f.detail += " Here that follows from the missing GPU (L1).";
  }
  out.push_back(std::move(f));
}

// cuInit returned 999: nvidia-uvm missing, else a GPU in a bad state.
void unknown_error_rule(const view::Machine& m, const std::string& evidence, std::vector<Finding>& out) {
  const auto& s = m.snap;
  auto f = make_finding("cuda-init-unknown-error");
  f.evidence.push_back(evidence);
  const bool uvm = m.module_loaded("nvidia_uvm") && node_present(s, "/dev/nvidia-uvm");
  f.detail =
      uvm ? "With nvidia-uvm in place, a GPU in a bad state is the usual cause (the kernel log shows Xid errors); "
            "a reset or reboot clears it."
          : "nvidia-uvm is not loaded or /dev/nvidia-uvm is missing: CUDA cannot initialise without it (common "
            "after a suspend and resume).";
  if (!uvm) f.evidence.emplace_back("nvidia_uvm module or /dev/nvidia-uvm missing");
  if (!uvm && s.driver.nvidia_modprobe_setuid)
    f.detail += " A CUDA program you run may still start: libcuda runs the setuid " + s.driver.nvidia_modprobe +
                " to load the module and create the node, which cudoctor's probe does not let it do (it runs no "
                "program). Loading it once, as below, serves both.";
  if (uvm) {
    f.fix = {"Read the kernel log; reset the GPU or reboot.", {}, {kernel_log(m, "xid")}};
    if (m.has_tool("nvidia-smi")) f.fix.commands.push_back(fixes::as_root(m, "nvidia-smi -r"));
  } else {
    f.fix = {"Reload nvidia-uvm.",
             {fmt::format("{}; {}", fixes::as_root(m, "rmmod nvidia_uvm"), fixes::as_root(m, "modprobe nvidia_uvm"))}};
    if (!s.driver.nvidia_modprobe.empty())
      f.fix.commands.push_back(fixes::as_root(m, fixes::shell_quote(s.driver.nvidia_modprobe) + " -u -c=0"));
  }
  out.push_back(std::move(f));
}

// cuInit returned 804: a forward-compatibility libcuda on a GPU that does not allow it.
void forward_compat_rule(const std::string& evidence, std::vector<Finding>& out) {
  auto f = make_finding("cuda-forward-compat-unsupported");
  f.evidence.push_back(evidence);
  f.detail =
      "The libcuda loaded comes from a CUDA forward-compatibility package (cuda-compat), which only data-center "
      "GPUs support; on GeForce and workstation GPUs use the installed driver's own libcuda.";
  f.fix = {"Take the compat directory off the loader path (often /usr/local/cuda/compat in containers).",
           {},
           {"echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n compat", "grep -rn compat /etc/ld.so.conf.d/"}};
  out.push_back(std::move(f));
}

void init_failed_rule(const view::Machine& m, const kb::KnowledgeBase& kb, const DriverApi& d,
                      const std::string& evidence, std::vector<Finding>& out) {
  auto f = make_finding("cuda-init-failed");
  f.title = fmt::format("cuInit fails: {}", call_text(d.init, kb, "driver"));
  if (const auto* e = kb.cuda_error("driver", d.init.code)) f.detail = e->meaning + kb::causes_text(*e);
  f.evidence.push_back(evidence);
  f.fix = {"Read the kernel log for NVRM errors.", {}, {kernel_log(m, "-e NVRM -e xid")}};
  out.push_back(std::move(f));
}

// Whether cuInit failed; the finding that says how.
bool init_rules(const view::Machine& m, const kb::KnowledgeBase& kb, const DriverApi& d, const std::string& evidence,
                std::vector<Finding>& out) {
  if (d.init.code == 34 || d.library.find("/stubs/") != std::string::npos)
    stub_driver_rule(m, d, evidence, out);
  else if (d.init.code == 100)
    no_device_rule(m, evidence, out);
  else if (d.init.code == 999)
    unknown_error_rule(m, evidence, out);
  else if (d.init.code == 804)
    forward_compat_rule(evidence, out);
  else if (d.init.code != 0)
    init_failed_rule(m, kb, d, evidence, out);
  else
    return false;
  return true;
}

// cuInit worked: a context on each device, the devices, and the count against NVML's.
void devices_rules(const view::Machine& m, const kb::KnowledgeBase& kb, const DriverApi& d, const std::string& evidence,
                   std::vector<Finding>& out) {
  for (const auto& dev : d.devices)
    if (dev.context.code != 0) {
      auto f = make_finding("cuda-context-failed");
      f.title =
          fmt::format("No CUDA context on GPU {} {}: {}", dev.index, dev.name, call_text(dev.context, kb, "driver"));
      if (const auto* e = kb.cuda_error("driver", dev.context.code)) f.detail = e->meaning + kb::causes_text(*e);
      f.evidence.push_back(evidence);
      f.fix = {"See which processes hold the GPU and its compute mode.", {}, {}};
      add_smi(m, f.fix.checks, "--query-compute-apps=pid,process_name,used_memory --format=csv");
      add_smi(m, f.fix.checks, "--query-gpu=index,name,compute_mode --format=csv");
      out.push_back(std::move(f));
    }
  auto f = make_finding("cuda-driver-ok");
  std::vector<std::string> names;
  for (const auto& dev : d.devices) names.push_back(fmt::format("{} (cc {})", dev.name, dev.compute_capability));
  f.title = fmt::format("CUDA driver API {}: {} device{}{}", cuda_str(d.driver_version), d.devices.size(),
                        d.devices.size() == 1 ? "" : "s",
                        names.empty() ? "" : ", " + fmt::format("{}", fmt::join(names, ", ")));
  f.evidence.push_back(evidence);
  for (const auto& dev : d.devices)
    f.evidence.push_back(fmt::format("device {} {}: {:.1f} GiB, {} SMs, {} MHz, memory {} MHz x {} bits, {}", dev.index,
                                     dev.pci_bus_id, static_cast<double>(dev.memory_total_bytes) / (1 << 30),
                                     dev.multiprocessors, dev.clock_mhz, dev.memory_clock_mhz,
                                     dev.memory_bus_width_bits, dev.context.code == 0 ? "context ok" : "no context"));
  out.push_back(std::move(f));
  count_rule(m, out);
}

}  // namespace

void driver_api_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& d = m.snap.runtime.driver_api;
  if (d.outcome.status == snapshot::ChildStatus::not_run) return;  // no libcuda: L1 says so
  if (d.outcome.status != snapshot::ChildStatus::ok) {
    driver_failed_rule(m, d, out);
    return;
  }
  const auto evidence = fmt::format("{}: cuDriverGetVersion = {} (CUDA {}), cuInit(0) = {}", d.library,
                                    d.driver_version, cuda_str(d.driver_version), call_text(d.init, kb, "driver"));
  if (init_rules(m, kb, d, evidence, out)) return;
  if (const auto bad = implausible_driver_api(d); !bad.empty()) {
    out.push_back(implausible("cuda-driver-implausible", "The CUDA driver API", d.library, bad));
    return;
  }
  devices_rules(m, kb, d, evidence, out);
}

}  // namespace cudoctor::rules::l4
