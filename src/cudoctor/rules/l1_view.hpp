#pragma once
// What the L1 (driver) rules share: the machine as they see it, the evidence lines they
// write, and the rule families, each in a file of its own (driver_rules.cpp calls them in
// causal order).
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

// The GPU's name: NVML's, else pci.ids'; "" when neither is known.
std::string gpu_name(const snapshot::Gpu& g);
// "0000:01:00.0 NVIDIA H100 80GB HBM3": gpu_name, else the ids.
std::string gpu_label(const snapshot::Gpu& g);
// "/sys/bus/pci/devices/…: [10de:2330] class 0x030200, driver nvidia (…)"
std::string pci_evidence(const snapshot::PciDevice& d);
// "/dev/nvidiactl: crw-rw-rw- uid 0 gid 0, device 195:255" or "…: missing"
std::string node_evidence(const snapshot::DeviceNode& n);
// "/proc/modules: nvidia=loaded nvidia_uvm=absent …"
std::string modules_evidence(const View& v);

// No NVIDIA GPU on the PCI bus: no-nvidia-gpu, saying why as far as the machine shows (l1_binding.cpp).
void no_gpu_rule(const View& v, std::vector<Finding>& out);
// gpus-present first, then per GPU nouveau-bound, gpu-bound-to-vfio, driver-too-old-for-gpu,
// driver-too-new-for-gpu or gpu-not-bound (l1_binding.cpp).
void binding_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// nvidia-module-loaded, or why not: nvidia-module-not-loaded, nvidia-module-blacklisted,
// module-blocked-by-secure-boot (l1_module.cpp).
void module_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// container-capability-missing: a container without the compute capability (l1_container.cpp).
void capability_rule(const View& v, std::vector<Finding>& out);
// container-no-gpu-access, then capability_rule. Returns false when the container has no GPU
// access: everything after follows from it (l1_container.cpp).
bool container_access_rules(const View& v, std::vector<Finding>& out);
// container-requirement-unmet or container-requirement-by-brand, per NVIDIA_REQUIRE_* (l1_container.cpp).
void requirement_rule(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// With the module loaded: uvm-module-not-loaded or uvm-loaded-on-demand, device-nodes-missing
// or device-nodes-created-on-demand, device-nodes-not-permitted, device-nodes-ok (l1_nodes.cpp).
void node_rules(const View& v, std::vector<Finding>& out);
// driver-library-missing, driver-version-mismatch or driver-libraries-ok (l1_libraries.cpp).
void library_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// A libcuda from cuda-compat: cuda-compat-in-use or cuda-compat-unusable. False when cuda is
// not one (or the versions cannot be compared), and the usual library rules judge it (l1_compat.cpp).
bool forward_compat_rules(const View& v, const kb::KnowledgeBase& kb, const snapshot::DriverLibrary& cuda,
                          std::vector<Finding>& out);
// libcuda-unversioned-missing: Triton or old bitsandbytes is installed and the libcuda.so it
// needs is not where it looks (l1_unversioned.cpp).
void unversioned_libcuda_rule(const View& v, std::vector<Finding>& out);
// cdi-spec-stale: an NVIDIA CDI specification that mounts another driver's libraries (l1_cdi.cpp).
void cdi_rule(const View& v, std::vector<Finding>& out);
// WSL2: wsl-gpu-device or wsl-no-gpu-device, then the container, library and NVML rules (l1_wsl.cpp).
void wsl_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// nvml-failed, nvml-error or nvml-error-explained-above, nvml-implausible, nvml-ok and
// gpu-count-mismatch (l1_nvml.cpp). explained_above: an error found before explains NVML's failure.
void nvml_rules(const View& v, const kb::KnowledgeBase& kb, bool explained_above, std::vector<Finding>& out);
// Per NVIDIA GPU: gpu-runtime-suspended, or pcie-link-degraded and pcie-link-limited-by-port;
// per GPU NVML answered for: gpu-power-limit-lowered, gpu-clocks-slowed (l1_link_power.cpp).
void link_power_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out);
// The GPU sleeps: runtime-suspended, or in D3 (D3cold on a laptop whose GPU is off).
bool asleep(const snapshot::PciDevice& d);
// Asleep, and NVML started without listing it: it did not wake when the driver was opened.
bool stuck_asleep(const View& v, const snapshot::Gpu& g);
// gpu-stuck-in-d3cold for such a GPU (l1_hybrid.cpp).
void stuck_asleep_rule(const View& v, const snapshot::Gpu& g, std::vector<Finding>& out);
// gpu-hybrid-graphics: another vendor's GPU drives the display beside the NVIDIA one (l1_hybrid.cpp).
void hybrid_rule(const View& v, std::vector<Finding>& out);

}  // namespace cudoctor::rules::l1
