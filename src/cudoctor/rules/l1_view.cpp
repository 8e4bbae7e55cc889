#include "cudoctor/rules/l1_view.hpp"

#include <fmt/format.h>

namespace cudoctor::rules::l1 {
namespace {

std::string mode_string(const snapshot::DeviceNode& n) {
  std::string s = n.type == snapshot::NodeType::char_device ? "c" : n.type == snapshot::NodeType::file ? "-" : "?";
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) s += (n.mode & (0400u >> i)) ? rwx[i] : '-';
  return s;
}

}  // namespace

// NVML's marketing name first (pci.ids lags new GPUs by months), then pci.ids, then ids.
std::string gpu_name(const snapshot::Gpu& g) {
  return g.nvml && !g.nvml->name.empty() ? g.nvml->name : g.pci.device_name;
}

std::string gpu_label(const snapshot::Gpu& g) {
  if (const auto name = gpu_name(g); !name.empty()) return fmt::format("{} {}", g.pci.address, name);
  return fmt::format("{} [10de:{:04x}]", g.pci.address, g.pci.device_id);
}

std::string pci_evidence(const snapshot::PciDevice& d) {
  return fmt::format("/sys/bus/pci/devices/{}: [{:04x}:{:04x}] class 0x{:06x}, driver {}{}", d.address, d.vendor_id,
                     d.device_id, d.class_code, d.driver.empty() ? "none" : d.driver,
                     d.device_name.empty() ? "" : " (" + d.device_name + ")");
}

std::string node_evidence(const snapshot::DeviceNode& n) {
  if (n.type == snapshot::NodeType::missing) return n.path + ": missing";
  return fmt::format("{}: {} uid {} gid {}{}", n.path, mode_string(n), n.uid, n.gid,
                     n.type == snapshot::NodeType::char_device ? fmt::format(", device {}:{}", n.major, n.minor) : "");
}

std::string modules_evidence(const View& v) {
  std::string s = v.snap.driver.modules_listed ? "/proc/modules:" : "/proc/modules unreadable; /sys/module:";
  for (const auto& m : v.snap.driver.modules) s += fmt::format(" {}={}", m.name, m.loaded ? "loaded" : "absent");
  return s;
}
}  // namespace cudoctor::rules::l1
