// L4 and L5: what the driver API, each CUDA runtime and the computation check answered.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/plausible.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {
namespace {

using snapshot::CudaCall;
using snapshot::Snapshot;

// The kernel log filtered for patterns, read as root where the kernel restricts it.
std::string kernel_log(const view::Machine& m, std::string_view grep_args) {
  return fmt::format("{} | grep -i {}", fixes::as_root(m, "dmesg"), grep_args);
}

// An nvidia-smi query, or nothing where nvidia-smi is not installed.
void add_smi(const view::Machine& m, std::vector<std::string>& checks, std::string_view args) {
  if (m.has_tool("nvidia-smi")) checks.push_back(fmt::format("nvidia-smi {}", args));
}

// `cudoctor plan` where this machine gives it something to plan from.
std::vector<std::string> plan_commands(const view::Machine& m) {
  const auto plan = fixes::plan_command(m);
  return plan.empty() ? std::vector<std::string>{} : std::vector<std::string>{plan};
}

// CUDA_VISIBLE_DEVICES values that leave no device: empty, -1 (an index that cannot exist),
// and what batch systems set for a job without GPUs (Slurm's NoDevFiles, "none").
bool hides_every_gpu(const std::string& v) {
  return v.empty() || v == "-1" || v == "NoDevFiles" || v == "none";
}

std::string call_text(const CudaCall& c, const kb::KnowledgeBase& kb, const char* api) {
  auto name = c.name;
  // The stub library has no error names; NVIDIA's headers (the knowledge base) do.
  if (const auto* e = kb.cuda_error(api, c.code); e && (name.empty() || name.starts_with("CUresult"))) name = e->name;
  return fmt::format("{} {}{}", c.code, name, c.message.empty() ? "" : " \"" + c.message + "\"");
}

// lib "" when what already names the library.
std::string outcome_title(const snapshot::ChildOutcome& o, const std::string& what_alone, const std::string& lib) {
  // "cuInit hung", or with the call it was in: "The driver API check hung in cuInit".
  const auto what = o.last_call.empty() || o.status == "load_failed" || what_alone.ends_with(o.last_call)
                        ? what_alone
                        : what_alone + " (in " + o.last_call + ")";
  if (lib.empty()) {
    if (o.status == "crashed") return fmt::format("{} crashed: {}", what, o.message);
    if (o.status == "timeout") return fmt::format("{} hung: no answer ({})", what, o.message);
    if (o.status == "load_failed") return fmt::format("{} could not be loaded", what);
    return fmt::format("{} gave no answer ({}: {})", what, o.status, o.message);
  }
  if (o.status == "crashed") return fmt::format("{} crashed: {} in {}", what, o.message, lib);
  if (o.status == "timeout") return fmt::format("{} hung: no answer from {} ({})", what, lib, o.message);
  if (o.status == "load_failed") return fmt::format("{} could not load {}", what, lib);
  return fmt::format("{} gave no answer from {} ({}: {})", what, lib, o.status, o.message);
}

// Values that cannot be true, as a finding in place of the healthy one.
Finding implausible(const char* id, const std::string& who, const std::string& lib,
                    const std::vector<std::string>& bad) {
  auto f = make_finding(id);
  f.title = fmt::format("{} answered with values that cannot be true: {}{}", who, bad.front(),
                        bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : "");
  f.detail = fmt::format(
      "No CUDA library of NVIDIA's reports these: {} is damaged, is not NVIDIA's, or answered "
      "garbage, so cudoctor does not take its answer as healthy.",
      lib);
  for (const auto& b : bad) f.evidence.push_back(fmt::format("{}: {}", lib, b));
  f.fix = {"Check which file this is and where it comes from; reinstall the driver or toolkit it belongs to.",
           {},
           {"ls -l " + fixes::shell_quote(lib), "cudoctor ldd " + fixes::shell_quote(lib)}};
  return f;
}

// NVML and the driver API count the same GPUs unless CUDA_VISIBLE_DEVICES narrows the
// driver's view or MIG is on (CUDA then enumerates MIG instances).
void count_rule(const view::Machine& m, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const auto& d = s.runtime.driver_api;
  const auto& n = s.driver.nvml;
  if (s.runtime.cuda_visible_devices || n.outcome.status != "ok" || n.init_code != 0 || d.device_count < 0) return;
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

std::string cuda_str(int encoded) {
  return encoded > 0 ? util::cuda_version_string(encoded) : "none";
}

void driver_api_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const auto& d = s.runtime.driver_api;
  if (d.outcome.status == "not_run") return;  // no libcuda: L1 says so
  if (d.outcome.status != "ok") {
    auto f = make_finding("cuda-driver-failed");
    const bool in_init = d.outcome.last_call.empty() || d.outcome.last_call == "cuInit";
    f.title = outcome_title(d.outcome, in_init ? "cuInit" : "The CUDA driver API", d.library);
    f.detail =
        "cudoctor ran the driver in a separate process, so the report is whole; every CUDA program on this "
        "machine will fail the same way.";
    f.evidence.push_back(
        fmt::format("child process: {} after {:.2f} s: {}", d.outcome.status, d.outcome.seconds, d.outcome.message));
    f.fix = {
        "Reinstall the driver, and read the kernel log for NVRM or Xid errors.", {}, {kernel_log(m, "-e NVRM -e xid")}};
    out.push_back(std::move(f));
    return;
  }
  const auto evidence = fmt::format("{}: cuDriverGetVersion = {} (CUDA {}), cuInit(0) = {}", d.library,
                                    d.driver_version, cuda_str(d.driver_version), call_text(d.init, kb, "driver"));
  if (d.init.code == 34 || d.library.find("/stubs/") != std::string::npos) {
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
    return;
  }
  if (d.init.code == 100) {
    auto f = make_finding("cuda-no-device");
    f.evidence.push_back(evidence);
    const auto& cvd = s.runtime.cuda_visible_devices;
    if (cvd) f.evidence.push_back(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\"", *cvd));
    if (cvd && hides_every_gpu(*cvd)) {
      f.title = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides every GPU", *cvd);
      f.detail =
          "An empty or invalid CUDA_VISIBLE_DEVICES makes the driver report no device, whatever the machine has.";
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
      if (s.gpus.empty()) {
        f.severity = Severity::info;
        f.detail += " Here that follows from the missing GPU (L1).";
      }
    }
    out.push_back(std::move(f));
    return;
  }
  if (d.init.code == 999) {
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
      f.fix = {
          "Reload nvidia-uvm.",
          {fmt::format("{}; {}", fixes::as_root(m, "rmmod nvidia_uvm"), fixes::as_root(m, "modprobe nvidia_uvm"))}};
      if (!s.driver.nvidia_modprobe.empty())
        f.fix.commands.push_back(fixes::as_root(m, fixes::shell_quote(s.driver.nvidia_modprobe) + " -u -c=0"));
    }
    out.push_back(std::move(f));
    return;
  }
  if (d.init.code == 804) {
    auto f = make_finding("cuda-forward-compat-unsupported");
    f.evidence.push_back(evidence);
    f.detail =
        "The libcuda loaded comes from a CUDA forward-compatibility package (cuda-compat), which only data-center "
        "GPUs support; on GeForce and workstation GPUs use the installed driver's own libcuda.";
    f.fix = {"Take the compat directory off the loader path (often /usr/local/cuda/compat in containers).",
             {},
             {"echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n compat", "grep -rn compat /etc/ld.so.conf.d/"}};
    out.push_back(std::move(f));
    return;
  }
  if (d.init.code != 0) {
    auto f = make_finding("cuda-init-failed");
    f.title = fmt::format("cuInit fails: {}", call_text(d.init, kb, "driver"));
    if (const auto* e = kb.cuda_error("driver", d.init.code))
      f.detail = e->meaning + (e->causes.empty() ? "" : " " + e->causes);
    f.evidence.push_back(evidence);
    f.fix = {"Read the kernel log for NVRM errors.", {}, {kernel_log(m, "-e NVRM -e xid")}};
    out.push_back(std::move(f));
    return;
  }
  if (const auto bad = implausible_driver_api(d); !bad.empty()) {
    out.push_back(implausible("cuda-driver-implausible", "The CUDA driver API", d.library, bad));
    return;
  }
  for (const auto& dev : d.devices)
    if (dev.context.code != 0) {
      auto f = make_finding("cuda-context-failed");
      f.title =
          fmt::format("No CUDA context on GPU {} {}: {}", dev.index, dev.name, call_text(dev.context, kb, "driver"));
      if (const auto* e = kb.cuda_error("driver", dev.context.code))
        f.detail = e->meaning + (e->causes.empty() ? "" : " " + e->causes);
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

void cudart_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& s = m.snap;
  for (const auto& c : s.runtime.cudarts) {
    const auto rt = cuda_str(c.runtime_version);
    // Named by its version when it reported one, else by its file.
    const bool known = c.runtime_version > 0 && plausible_cuda_version(c.runtime_version);
    const auto who = known ? fmt::format("CUDA runtime {} ({})", rt, c.origin)
                           : fmt::format("CUDA runtime at {} ({})", c.library, c.origin);
    if (c.outcome.status != "ok") {
      auto f = make_finding("cuda-runtime-failed");
      f.title = outcome_title(c.outcome, who, known ? c.library : "");
      f.evidence.push_back(fmt::format("child process: {}: {}", c.outcome.status, c.outcome.message));
      out.push_back(std::move(f));
      continue;
    }
    if (const auto bad = implausible_cudart(c); !bad.empty()) {
      out.push_back(
          implausible("cuda-runtime-implausible", fmt::format("The CUDA runtime ({})", c.origin), c.library, bad));
      continue;
    }
    const auto evidence =
        fmt::format("{}: cudaRuntimeGetVersion = {} ({}), cudaDriverGetVersion = {} ({}), cudaGetDeviceCount = {}",
                    c.library, c.runtime_version, rt, c.driver_version, cuda_str(c.driver_version),
                    call_text(c.device_count_call, kb, "runtime"));
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
      auto f = make_finding("runtime-too-new-for-driver");
      f.title =
          fmt::format("{} is newer than the driver, which supports CUDA {}: error 35", who, cuda_str(c.driver_version));
      const auto runtime = util::Version::parse(rt);
      const auto need = runtime ? kb.min_driver_for_cuda(*runtime) : std::nullopt;
      const auto floor = runtime ? kb.minor_compat_floor(runtime->major()) : std::nullopt;
      f.detail =
          fmt::format("A CUDA {} runtime needs a driver for CUDA {} or newer{}. The driver reports CUDA {}.", rt, rt,
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
    } else if (code == 34) {
      auto f = make_finding("cuda-stub-driver");
      f.title = fmt::format("{} loaded the toolkit's stub libcuda: error 34", who);
      f.detail = "The runtime found the stub libcuda.so from a toolkit's lib/stubs, not the driver's.";
      f.evidence.push_back(evidence);
      f.fix = {"Remove the stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d.",
               {fixes::as_root(m, "ldconfig")}};
      out.push_back(std::move(f));
    } else if (code == 100) {
      if (s.runtime.driver_api.init.code == 100) continue;  // the driver API finding says it
      auto f = make_finding("cuda-no-device");
      f.title = fmt::format("{}: no CUDA device", who);
      f.evidence.push_back(evidence);
      out.push_back(std::move(f));
    } else if (code != 0) {
      auto f = make_finding("cuda-runtime-failed");
      f.title = fmt::format("{}: cudaGetDeviceCount = {}", who, call_text(c.device_count_call, kb, "runtime"));
      if (const auto* e = kb.cuda_error("runtime", code))
        f.detail = e->meaning + (e->causes.empty() ? "" : " " + e->causes);
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
}

// Usable bandwidth of a PCIe link in GB/s per direction: transfer rate x lanes x encoding
// efficiency / 8 bits (PCI Express Base Specification: 8b/10b up to 5 GT/s, 128b/130b from
// 8 GT/s; 64 GT/s uses FLIT mode, taken as 242/256).
double pcie_gb_per_s(int generation, int lanes) {
  const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (generation < 1 || generation > 6 || lanes <= 0) return 0;
  const double efficiency = generation <= 2 ? 0.8 : generation <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
  return gts[generation] * lanes * efficiency / 8.0;
}

void bandwidth_rule(const view::Machine& m, const snapshot::ComputeCheck& c, std::vector<Finding>& out) {
  const auto& s = m.snap;
  const snapshot::NvmlGpu* nvml = nullptr;
  for (const auto& g : s.gpus)
    if (g.nvml && g.nvml->index == c.device) nvml = &*g.nvml;
  // Copies that shared the bus with another GPU's say nothing of this GPU's link.
  if (!nvml || !c.copies_timed_alone) return;
  const double link = pcie_gb_per_s(nvml->pcie_gen_max, nvml->pcie_width_max);
  double best = 0;
  for (const auto& k : c.copies)
    if (k.kind.ends_with("pinned")) best = std::max(best, k.gb_per_s);
  // Pinned copies of 64 MiB reach 75-90 % of the link on a healthy machine; under 40 %
  // the link trained narrower or slower than it can, or something else holds the bus.
  if (link <= 0 || best <= 0 || best >= 0.4 * link) return;
  auto f = make_finding("copy-bandwidth-low");
  f.title = fmt::format("GPU {}: pinned copies reach {:.1f} GB/s of the {:.1f} GB/s a PCIe gen {} x{} link allows",
                        c.device, best, link, nvml->pcie_gen_max, nvml->pcie_width_max);
  f.detail =
      "The link may be running below its capability (a riser, a slot wired x8 or x4, a link that trained down), "
      "or another device shares it.";
  f.evidence.push_back(fmt::format("NVML: PCIe gen {} x{} now, gen {} x{} at most", nvml->pcie_gen_current,
                                   nvml->pcie_width_current, nvml->pcie_gen_max, nvml->pcie_width_max));
  f.fix = {"Check the link under load and the slot the GPU sits in.", {}, {}};
  add_smi(m, f.fix.checks, "-q -d PCIE");
  if (m.has_tool("lspci"))
    f.fix.checks.push_back(fixes::as_root(m, "lspci -vv -d 10de:") + " | grep -i -e lnkcap -e lnksta");
  out.push_back(std::move(f));
}

void compute_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& s = m.snap;
  for (const auto& c : s.runtime.compute) {
    const auto gpu = fmt::format("GPU {}", c.device);
    if (c.outcome.status != "ok") {
      auto f = make_finding("compute-failed");
      f.title = outcome_title(c.outcome, "The computation check on " + gpu, c.cudart);
      f.evidence.push_back(
          fmt::format("child process: {} after {:.2f} s: {}", c.outcome.status, c.outcome.seconds, c.outcome.message));
      out.push_back(std::move(f));
      continue;
    }
    if (c.allocation.code != 0) {
      auto f = make_finding(c.allocation.code == 2 ? "gpu-out-of-memory" : "compute-failed");
      f.title =
          fmt::format("{}: {} MiB cannot be allocated: {}", gpu,
                      (c.copies.empty() ? 64u : c.copies.front().bytes >> 20), call_text(c.allocation, kb, "runtime"));
      for (const auto& g : s.gpus)
        if (g.nvml && g.nvml->index == c.device)
          f.evidence.push_back(fmt::format("NVML: {:.1f} of {:.1f} GiB in use",
                                           static_cast<double>(g.nvml->memory_used_bytes) / (1 << 30),
                                           static_cast<double>(g.nvml->memory_total_bytes) / (1 << 30)));
      f.fix = {"See which processes hold the GPU's memory.", {}, {}};
      add_smi(m, f.fix.checks, "--query-compute-apps=pid,process_name,used_memory --format=csv");
      out.push_back(std::move(f));
      continue;
    }
    bool bad = false;
    for (const auto& k : c.copies)
      if (!k.matches && k.kind.starts_with("d2h")) {
        auto f = make_finding("copy-corrupted");
        f.title =
            fmt::format("{}: {} MiB copied to the GPU and back ({}) came back changed", gpu, k.bytes >> 20, k.kind);
        f.detail = "Host-device transfers corrupt data: a failing GPU, its memory, or the PCIe link.";
        f.fix = {"Check for Xid and PCIe errors; run the GPU's memory test.", {}, {kernel_log(m, "-e xid -e aer")}};
        out.push_back(std::move(f));
        bad = true;
      }
    for (const auto& g : c.gemms) {
      if (g.status.code > 0) {
        auto f = make_finding("gemm-failed");
        f.title = fmt::format("{}: {} GEMM fails: {} {}", gpu, g.dtype, g.status.name, g.status.message);
        f.evidence.push_back(fmt::format("cuBLAS: {}", c.cublas));
        out.push_back(std::move(f));
        bad = true;
      } else if (!g.passed) {
        auto f = make_finding("gemm-wrong-result");
        f.title = fmt::format("{}: {} GEMM is wrong by {:.3g} (tolerance {:.3g})", gpu, g.dtype, g.max_abs_error,
                              g.tolerance);
        f.detail = fmt::format(
            "A {}x{}x{} product of values in [-1, 1] differs from the CPU's by more than fp32 rounding "
            "allows: a faulty GPU, a broken library, or a math mode that changes results.",
            g.m, g.n, g.k);
        f.evidence.push_back(fmt::format("cuBLAS: {}", c.cublas));
        f.fix = {"Check NVIDIA_TF32_OVERRIDE and CUBLAS_* variables, then the GPU (Xid errors, nvidia-smi -q -d ECC).",
                 {},
                 {"env | grep -e TF32 -e CUBLAS"}};
        add_smi(m, f.fix.checks, "-q -d ECC");
        out.push_back(std::move(f));
        bad = true;
      }
    }
    if (bad) continue;
    bandwidth_rule(m, c, out);
    auto f = make_finding("compute-ok");
    std::string copies, gemms;
    for (const auto& k : c.copies)
      copies += fmt::format("{}{} {:.1f} GB/s", copies.empty() ? "" : ", ", k.kind, k.gb_per_s);
    for (const auto& g : c.gemms)
      gemms += fmt::format("{}{} {:.1f} TFLOP/s", gemms.empty() ? "" : ", ", g.dtype, g.tflops);
    // A GEMM runs only with a cuBLAS; without one the title says so instead of "match ()".
    const auto gemm_text = !c.gemms.empty()   ? fmt::format("GEMMs match the CPU ({})", gemms)
                           : c.cublas.empty() ? std::string("GEMMs not run: no cuBLAS found")
                                              : fmt::format("GEMMs not run: {} ran none", c.cublas);
    f.title = fmt::format("{}: {}; {}", gpu, c.copies.empty() ? "no copies ran" : "copies match", gemm_text);
    f.evidence.push_back("copies: " + copies);
    for (const auto& g : c.gemms)
      f.evidence.push_back(fmt::format("{} {}x{}x{}: max error {:.3g} (tolerance {:.3g}); {:.1f} TFLOP/s at n={}",
                                       g.dtype, g.m, g.n, g.k, g.max_abs_error, g.tolerance, g.tflops,
                                       g.throughput_size));
    f.evidence.push_back(fmt::format("libraries: {}, {}", c.cudart, c.cublas.empty() ? "no cuBLAS" : c.cublas));
    out.push_back(std::move(f));
  }
}

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
  driver_api_rules(m, kb, out);
  cudart_rules(m, kb, out);
  compute_rules(m, kb, out);
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
