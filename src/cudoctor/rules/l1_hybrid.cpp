// L1: hybrid graphics and runtime power management. Which GPU drives the display on a laptop
// with an integrated GPU beside the NVIDIA one (Optimus / PRIME, read from boot_vga), and an
// NVIDIA GPU that runtime D3 put to sleep and that did not wake when NVML opened it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {
namespace {

// NVIDIA's README, "PCI-Express Runtime D3 (RTD3) Power Management": NVreg_DynamicPowerManagement
// 0x00 turns runtime D3 off, 0x02 (fine-grained) is the default on Ampere and later notebooks.
constexpr const char* k_rtd3_source =
    "https://download.nvidia.com/XFree86/Linux-x86_64/535.104.05/README/dynamicpowermanagement.html";

std::string device_name(const snapshot::PciDevice& d) {
  const auto name = d.device_name.empty() ? fmt::format("[{:04x}:{:04x}]", d.vendor_id, d.device_id) : d.device_name;
  return d.vendor_name.empty() ? name : d.vendor_name + " " + name;
}

std::string boot_vga_evidence(const snapshot::PciDevice& d) {
  return fmt::format("/sys/bus/pci/devices/{}/boot_vga: {} ({}, driver {})", d.address, d.boot_vga ? 1 : 0,
                     device_name(d), d.driver.empty() ? "none" : d.driver);
}

}  // namespace

bool asleep(const snapshot::PciDevice& d) {
  return d.runtime_status == "suspended" || d.power_state.starts_with("D3");
}

bool stuck_asleep(const View& v, const snapshot::Gpu& g) {
  const auto& n = v.snap.driver.nvml;
  return !v.in_container && g.pci.driver == "nvidia" && asleep(g.pci) &&
         n.outcome.status == snapshot::ChildStatus::ok && n.init_code == 0 && !g.nvml;
}

void stuck_asleep_rule(const View& v, const snapshot::Gpu& g, std::vector<Finding>& out) {
  const auto& d = g.pci;
  auto f = make_finding("gpu-stuck-in-d3cold");
  f.title = fmt::format("GPU {} is powered down ({}) and did not wake when NVML opened the driver", gpu_label(g),
                        d.power_state.empty() ? "runtime-suspended" : d.power_state);
  f.detail =
      "Runtime D3 powers an idle notebook GPU down; opening it must bring it back to D0. NVML started but does not "
      "list this GPU, so the driver could not power it up: the kernel log then says \"Unable to change power "
      "state from D3cold to D0\" or \"RmInitAdapter failed\". This is the platform's power control (ACPI, "
      "firmware) or the driver's runtime D3 on this machine, not a missing library. NVIDIA documents turning "
      "runtime D3 off with NVreg_DynamicPowerManagement=0x00 (" +
      std::string(k_rtd3_source) + ").";
  f.evidence.push_back(pci_evidence(d));
  f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power_state: {}", d.address,
                                   d.power_state.empty() ? "(no such file)" : d.power_state));
  f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power/runtime_status: {}", d.address,
                                   d.runtime_status.empty() ? "?" : d.runtime_status));
  if (!d.runtime_control.empty())
    f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power/control: {}", d.address, d.runtime_control));
  f.evidence.push_back(fmt::format("NVML: initialised, driver {}, {} GPU{} listed, none at {}",
                                   v.snap.driver.nvml.driver_version, v.snap.driver.nvml.gpus.size(),
                                   v.snap.driver.nvml.gpus.size() == 1 ? "" : "s", d.address));
  std::vector<std::string> cmds;
  // Keep it powered now (writing "on" resumes it), and turn runtime D3 off for the module.
  push_nonempty(cmds, write_as_root(v.m, "echo on", fmt::format("/sys/bus/pci/devices/{}/power/control", d.address)));
  push_nonempty(cmds, write_as_root(v.m, "echo 'options nvidia NVreg_DynamicPowerManagement=0x00'",
                                    "/etc/modprobe.d/nvidia-runtime-d3-off.conf"));
  push_nonempty(cmds, fixes::rebuild_initramfs(v.m));
  f.fix = {
      "Wake it and keep it powered (power/control on), turn the driver's runtime D3 off, then reboot; if it "
      "still does not wake, update the notebook's firmware (BIOS).",
      std::move(cmds),
      {fmt::format("cat /proc/driver/nvidia/gpus/{}/power", d.address),
       dmesg_check(v.m, "-e d3cold -e 'power state' -e RmInitAdapter")}};
  out.push_back(std::move(f));
}

void hybrid_rule(const View& v, std::vector<Finding>& out) {
  const auto& others = v.snap.driver.other_display_devices;
  const auto display = std::find_if(others.begin(), others.end(), [](const auto& d) { return d.boot_vga; });
  std::vector<const snapshot::Gpu*> nvidia;
  for (const auto* g : v.pci_gpus)
    if (g->pci.driver == "nvidia") nvidia.push_back(g);
  if (v.in_container || v.wsl2 || display == others.end() || nvidia.empty()) return;
  auto f = make_finding("gpu-hybrid-graphics");
  std::vector<std::string> labels;
  for (const auto* g : nvidia) labels.push_back(gpu_label(*g));
  f.title = fmt::format("Hybrid graphics: the display runs on {}; {} computes", device_name(*display),
                        fmt::join(labels, ", "));
  f.detail =
      "The integrated GPU drives the display (the firmware's boot VGA device) and the NVIDIA GPU renders only on "
      "request (PRIME render offload). CUDA uses the NVIDIA GPU either way; what the display runs on does not "
      "change what CUDA sees.";
  f.evidence.push_back(boot_vga_evidence(*display));
  for (const auto* g : nvidia) {
    f.evidence.push_back(boot_vga_evidence(g->pci));
    const auto& c = g->pci.runtime_control;
    if (!c.empty())
      f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power/control: {} ({})", g->pci.address, c,
                                       c == "auto" ? "runtime power management on: it sleeps when idle"
                                       : c == "on" ? "runtime power management off: it stays powered, on battery too"
                                                   : "as written"));
  }
  if (v.m.has_tool("glxinfo"))
    f.fix = {"", {}, {"__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia glxinfo -B | grep -i vendor"}};
  out.push_back(std::move(f));
}

}  // namespace cudoctor::rules::l1
