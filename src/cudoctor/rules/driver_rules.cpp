// L1: the driver, family by family in causal order (each family in its own l1_*.cpp): the GPUs
// on the bus and their binding, the kernel module, the container's access, the device nodes,
// the user-space libraries, and what NVML answered.
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/rules/rules.hpp"

namespace cudoctor::rules {
namespace {

Finding pci_unreadable() {
  auto f = make_finding("pci-unreadable");
  f.detail = "Without /sys/bus/pci, cudoctor cannot tell whether an NVIDIA GPU is present; the other checks go on.";
  f.evidence.emplace_back("/sys/bus/pci/devices: not readable");
  return f;
}

bool any_error(const std::vector<Finding>& fs) {
  for (const auto& f : fs)
    if (f.severity == Severity::error) return true;
  return false;
}

}  // namespace

std::vector<Finding> driver_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  std::vector<Finding> out;
  const l1::View v(m);
  if (m.snap.host.wsl.kind == "wsl1") return out;
  if (v.wsl2) {
    l1::wsl_rules(v, kb, out);
    return out;
  }
  if (!m.snap.driver.pci_listed) {
    out.push_back(pci_unreadable());
  } else if (v.pci_gpus.empty()) {
    l1::no_gpu_rule(v, out);
    l1::nvml_rules(v, kb, true, out);
    return out;
  } else {
    l1::binding_rules(v, kb, out);
  }
  l1::module_rules(v, kb, out);
  if (!l1::container_access_rules(v, out)) {
    l1::nvml_rules(v, kb, true, out);
    return out;
  }
  l1::requirement_rule(v, kb, out);
  l1::node_rules(v, out);
  l1::library_rules(v, kb, out);
  l1::unversioned_libcuda_rule(v, out);
  // An error found so far explains NVML's failure.
  l1::nvml_rules(v, kb, any_error(out), out);
  l1::cdi_rule(v, out);  // containers' view of the driver: explains nothing about NVML here
  l1::link_power_rules(v, kb, out);
  l1::hybrid_rule(v, out);
  return out;
}

}  // namespace cudoctor::rules
