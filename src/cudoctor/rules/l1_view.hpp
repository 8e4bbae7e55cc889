#pragma once
// What the L1 (driver) rules share: the machine as they see it, the evidence lines they
// write, and the rule families that live in files of their own (driver_rules.cpp calls them
// in causal order).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/util/version.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules::l1 {

// What every L1 rule needs to know about the machine, derived once.
struct View {
  const view::Machine& m;
  const snapshot::Snapshot& snap;
  std::optional<util::Version> driver;  // view::Machine's: one witness for every rule
  bool in_container = false;
  bool wsl2 = false;
  bool nvidia_loaded = false;  // the kernel says so: /proc/modules or /proc/driver/nvidia
  std::vector<const snapshot::Gpu*> pci_gpus;

  explicit View(const view::Machine& machine) : m(machine), snap(machine.snap) {
    driver = m.driver.version;
    in_container = m.in_container;
    wsl2 = m.wsl2;
    nvidia_loaded = m.nvidia_loaded;
    for (const auto& g : snap.gpus)
      if (!g.pci.address.empty()) pci_gpus.push_back(&g);
  }
  bool module_loaded(std::string_view name) const { return m.module_loaded(name); }
  const snapshot::DeviceNode* node(std::string_view path) const {
    for (const auto& n : snap.driver.device_nodes)
      if (n.path == path && n.type != snapshot::NodeType::missing) return &n;
    return nullptr;
  }
  const snapshot::DriverLibrary* library(std::string_view soname) const {
    for (const auto& l : snap.driver.libraries)
      if (l.soname == soname && !l.path.empty()) return &l;
    return nullptr;
  }
};

// "0000:01:00.0 NVIDIA H100 80GB HBM3": NVML's name, else pci.ids', else the ids.
std::string gpu_label(const snapshot::Gpu& g);
// "/sys/bus/pci/devices/…: [10de:2330] class 0x030200, driver nvidia (…)"
std::string pci_evidence(const snapshot::PciDevice& d);
// "/dev/nvidiactl: crw-rw-rw- uid 0 gid 0, device 195:255" or "…: missing"
std::string node_evidence(const snapshot::DeviceNode& n);
// "/proc/modules: nvidia=loaded nvidia_uvm=absent …"
std::string modules_evidence(const View& v);

// nvml-failed, nvml-error, nvml-implausible, nvml-ok and gpu-count-mismatch (l1_nvml.cpp).
// explained_above: an error found before explains NVML's failure.
void nvml_rules(const View& v, const kb::KnowledgeBase& kb, bool explained_above, std::vector<Finding>& out);

}  // namespace cudoctor::rules::l1
