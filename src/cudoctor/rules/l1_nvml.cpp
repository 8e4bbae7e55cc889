// L1: what NVML, run in a child process, answered: failed, an error, values that cannot be
// true, or the GPUs it sees (and whether it sees all that the driver holds).
#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/rules/plausible.hpp"

namespace cudoctor::rules::l1 {
namespace {

// NVML answered, but with values no NVML of NVIDIA's gives: not a healthy answer.
void implausible_nvml_rule(const View& v, const std::string& lib, const std::vector<std::string>& bad,
                           std::vector<Finding>& out) {
  auto f = make_finding("nvml-implausible");
  f.title = fmt::format("NVML answered with values that cannot be true: {}{}", bad.front(),
                        bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : "");
  f.detail = fmt::format(
      "No NVML of NVIDIA's reports these: {} is damaged, is not the driver's own library, or "
      "answered garbage. cudoctor does not take its answer as healthy; nvidia-smi and frameworks "
      "that use NVML read the same values.",
      lib.empty() ? "the library" : lib);
  for (const auto& b : bad) f.evidence.push_back(fmt::format("{}: {}", lib, b));
  f.fix = {"Check that libnvidia-ml.so.1 is the driver's own file; reinstall the driver if it is not.",
           {},
           nvml_checks(v.m, "--query-gpu=index,name,driver_version,compute_cap --format=csv", "")};
  f.fix.checks.insert(f.fix.checks.begin(),
                      "ls -l " + shell_quote(lib.empty() ? "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1" : lib));
  out.push_back(std::move(f));
}

// The child that ran NVML crashed, hung, exited or could not load it.
void nvml_failed_rule(const View& v, std::vector<Finding>& out) {
  const auto& n = v.snap.driver.nvml;
  const auto& o = n.outcome;
  const std::string lib = n.library;
  auto f = make_finding("nvml-failed");
  const auto call = o.last_call.empty() ? std::string() : " (in " + o.last_call + ")";
  if (o.status == snapshot::ChildStatus::crashed)
    f.title = fmt::format("NVML crashed{}: {} in {}", call, o.message, lib);
  else if (o.status == snapshot::ChildStatus::timeout)
    f.title = fmt::format("NVML hung{}: no answer from {} ({})", call, lib, o.message);
  else if (o.status == snapshot::ChildStatus::load_failed)
    f.title = fmt::format("NVML could not be loaded from {}", lib);
  else
    f.title = fmt::format("NVML gave no answer from {} ({})", lib, snapshot::to_string(o.status));
  f.detail =
      "cudoctor ran NVML in a separate process, so the report is whole; a program that uses NVML on this "
      "machine (nvidia-smi, a framework) will fail the same way.";
  f.evidence.push_back(
      fmt::format("child process: {} after {:.2f} s: {}", snapshot::to_string(o.status), o.seconds, o.message));
  f.fix = {"Check the driver installation is whole and the kernel log for NVRM or Xid errors.",
           {},
           nvml_checks(v.m, "--query-gpu=index,name,driver_version --format=csv", "-e NVRM -e xid")};
  out.push_back(std::move(f));
}

// nvmlInit returned an error: its name and meaning from the knowledge base.
void nvml_error_rule(const View& v, const kb::KnowledgeBase& kb, bool explained_above, std::vector<Finding>& out) {
  const auto& n = v.snap.driver.nvml;
  const std::string lib = n.library;
  auto f = make_finding(explained_above ? FindingId("nvml-error-explained-above") : FindingId("nvml-error"));
  const auto* rc = kb.nvml_return_code(n.init_code);
  // A code nvml.h does not name is shown as its number, not as a made-up name.
  const auto name = rc ? rc->name
                    : !n.init_error_name.empty() && !n.init_error_name.ends_with("_?")
                        ? n.init_error_name
                        : fmt::format("return code {}", n.init_code);
  f.title = fmt::format("NVML: {} ({})", n.init_error_string.empty() ? "nvmlInit failed" : n.init_error_string, name);
  if (rc) {
    f.detail = rc->meaning + ".";
    f.detail += kb::causes_text(*rc);
  }
  if (explained_above) f.detail += " Here this follows from the finding above.";
  f.evidence.push_back(fmt::format("{}: nvmlInit_v2() = {} {} \"{}\"", lib, n.init_code, name, n.init_error_string));
  if (rc) f.evidence.push_back("meaning: " + rc->source);
  if (n.init_code == 4)
    f.fix = {"Give the user access to the device nodes (see above).", {}, {"ls -l /dev/nvidia*"}};
  else if (!explained_above)
    f.fix = {"Check the kernel module and the kernel log.",
             {},
             nvml_checks(v.m, "--query-gpu=index,name,driver_version --format=csv", "-e NVRM -e nvidia")};
  out.push_back(std::move(f));
}

// NVML answered: the GPUs it sees, and whether it sees all that the driver holds.
void nvml_ok_rules(const View& v, const std::vector<const snapshot::NvmlGpu*>& gpus, std::vector<Finding>& out) {
  const auto& n = v.snap.driver.nvml;
  auto f = make_finding("nvml-ok");
  f.title = fmt::format("NVML: driver {}, CUDA {}, {} GPU{}", n.driver_version,
                        n.cuda_driver_version ? util::cuda_version_string(n.cuda_driver_version) : "?", gpus.size(),
                        gpus.size() == 1 ? "" : "s");
  for (const auto* g : gpus)
    f.evidence.push_back(
        fmt::format(
            "GPU {} {} {}: cc {}, {:.1f} GiB, PCIe gen {}/{} x{}/{}, persistence {}, MIG {}", g->index, g->pci_bus_id,
            g->name, g->compute_capability, static_cast<double>(g->memory_total_bytes) / (1024.0 * 1024 * 1024),
            g->pcie_gen_current, g->pcie_gen_max, g->pcie_width_current, g->pcie_width_max,
            g->persistence_mode.empty() ? "?" : g->persistence_mode, g->mig_mode.empty() ? "n/a" : g->mig_mode) +
        (g->performance_state >= 0 ? fmt::format(", P{}", g->performance_state) : "") +
        (g->power_limit_enforced_w >= 0 ? fmt::format(", power limit {} W", g->power_limit_enforced_w) : ""));
  out.push_back(std::move(f));
  std::size_t bound = 0, stuck = 0;
  for (const auto* g : v.pci_gpus) {
    bound += g->pci.driver == "nvidia";
    if (stuck_asleep(v, *g)) {
      stuck_asleep_rule(v, *g, out);
      ++stuck;
    }
  }
  if (!v.in_container && gpus.size() + stuck < bound) {
    auto w = make_finding("gpu-count-mismatch");
    w.title = fmt::format("NVML sees {} of the {} GPUs bound to nvidia", gpus.size(), bound);
    w.detail =
        "A GPU that the driver holds but NVML does not list has usually failed (fallen off the bus, Xid 79) "
        "or is being reset.";
    for (const auto* g : v.pci_gpus) {
      bool seen = false;
      for (const auto* n2 : gpus) seen = seen || n2->pci_bus_id == g->pci.address;
      if (!seen && !stuck_asleep(v, *g)) w.evidence.push_back("not seen by NVML: " + pci_evidence(g->pci));
    }
    w.fix = {"Read the kernel log for Xid errors; a reset or reboot brings the GPU back.",
             {},
             nvml_checks(v.m, "-q | grep -i -A2 'retired\\|remapp'", "xid")};
    // The kernel log first: it says which GPU fell off and why.
    std::rotate(w.fix.checks.begin(), w.fix.checks.end() - 1, w.fix.checks.end());
    out.push_back(std::move(w));
  }
}

}  // namespace

void nvml_rules(const View& v, const kb::KnowledgeBase& kb, bool explained_above, std::vector<Finding>& out) {
  const auto& n = v.snap.driver.nvml;
  if (n.outcome.status == snapshot::ChildStatus::not_run) return;
  if (n.outcome.status != snapshot::ChildStatus::ok) {
    nvml_failed_rule(v, out);
    return;
  }
  if (n.init_code < 0) {
    // A reply that parsed but holds no nvmlInit result ("{}"): nothing NVML said is usable.
    implausible_nvml_rule(v, n.library, {"no result of nvmlInit in its reply"}, out);
    return;
  }
  if (n.init_code == 18) return;  // driver-version-mismatch says it, with the fix
  if (n.init_code != 0) {
    nvml_error_rule(v, kb, explained_above, out);
    return;
  }
  std::vector<const snapshot::NvmlGpu*> gpus;
  for (const auto& g : v.snap.gpus)
    if (g.nvml) gpus.push_back(&*g.nvml);
  const int pci = v.snap.driver.pci_listed && !v.wsl2 ? static_cast<int>(v.pci_gpus.size()) : -1;
  if (const auto bad = implausible_nvml(n, gpus, pci); !bad.empty()) {
    implausible_nvml_rule(v, n.library, bad, out);
    return;
  }
  nvml_ok_rules(v, gpus, out);
}

}  // namespace cudoctor::rules::l1
