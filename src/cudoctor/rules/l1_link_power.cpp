// L1: how each GPU runs, from sysfs and NVML: a PCIe link trained below what both its ends can
// do, a GPU asleep under runtime power management (normal), a power limit below the default,
// and clocks slowed by heat or a power brake.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::l1 {
namespace {

// PCIe generations (rates, what a lane carries) are the knowledge base's: pcie.json.
using PcieGen = kb::PcieGeneration;

// nvml.h's clocks-event reason bits (nvmlClocksEventReason*), those that slow the clocks below
// what the work asks for. GpuIdle (0x1) and the deprecated ApplicationsClocksSetting (0x2) are not.
struct Reason {
  std::uint64_t bit;
  const char* name;
  const char* meaning;
};
constexpr std::array<Reason, 6> k_slowing = {{
    {0x4, "SwPowerCap", "the software power cap: clocks kept down to stay within the power limit"},
    {0x8, "HwSlowdown", "hardware slowdown: clocks cut by half or more (temperature, power brake or power draw)"},
    {0x20, "SwThermalSlowdown", "the GPU or its memory at its maximum operating temperature"},
    {0x40, "HwThermalSlowdown", "hardware thermal slowdown: the GPU too hot"},
    {0x80, "HwPowerBrakeSlowdown", "an external power brake (the power supply or the system asserting it)"},
    {0x10, "SyncBoost", "clocks held to those of the other GPUs in its sync-boost group"},
}};

std::string reasons_text(std::int64_t bits) {
  std::string out;
  for (const auto& r : k_slowing)
    if (bits >= 0 && (static_cast<std::uint64_t>(bits) & r.bit))
      out += fmt::format("{}{} (0x{:x})", out.empty() ? "" : ", ", r.name, r.bit);
  if (bits >= 0 && (bits & 0x1)) out += std::string(out.empty() ? "" : ", ") + "GpuIdle (0x1)";
  return out.empty() ? "none" : out;
}

std::string clocks_evidence(const snapshot::NvmlGpu& g) {
  return fmt::format("NVML GPU {}: SM clock {} of {} MHz, P{}, {} % busy, {} C, drawing {} W, clocks-event reasons {}",
                     g.index, g.clock_sm_mhz, g.max_clock_sm_mhz, g.performance_state, g.utilization_gpu_pct,
                     g.temperature_c, g.power_draw_w, reasons_text(g.clocks_event_reasons));
}

// What the link carries per direction at this generation and width.
std::string rate(const PcieGen& g, int width) {
  return fmt::format("{:.1f} GB/s", g.lane_gb_per_s * width);
}

void asleep_rule(const snapshot::Gpu& g, std::vector<Finding>& out) {
  const auto& d = g.pci;
  auto f = make_finding("gpu-runtime-suspended");
  f.title = fmt::format("GPU {} is asleep (runtime power management); it wakes when a program opens it", gpu_label(g));
  f.detail =
      "A GPU with nothing to do is powered down by the driver's runtime D3 (the default on Ampere and later "
      "notebooks): its link then reads its lowest speed, or nothing. This is normal and costs a fraction of a "
      "second when CUDA next starts; the link trains to full speed under load.";
  f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power/runtime_status: {}", d.address, d.runtime_status));
  if (!d.power_state.empty())
    f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power_state: {}", d.address, d.power_state));
  if (!d.runtime_control.empty())
    f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}/power/control: {}", d.address, d.runtime_control));
  if (!d.current_link_speed.empty())
    f.evidence.push_back(fmt::format("link now: {} x{} (capable of {} x{})", d.current_link_speed, d.current_link_width,
                                     d.max_link_speed, d.max_link_width));
  out.push_back(std::move(f));
}

// The link's capability is the lesser of the device's and its port's.
void link_rule(const View& v, const kb::KnowledgeBase& kb, const snapshot::Gpu& g, std::vector<Finding>& out) {
  // In a virtual machine the port above a passed-through GPU is the hypervisor's emulated one
  // (QEMU's pcie-root-port), whose capability says nothing of the physical slot.
  auto d = g.pci;
  if (!v.snap.host.hypervisor.kind.empty()) {
    d.port_address.clear();
    d.port_max_link_speed.clear();
    d.port_max_link_width = 0;
  }
  const auto* dev_gen = kb.pcie_generation_at(d.max_link_speed);
  const auto* port_gen = d.port_max_link_speed.empty() ? dev_gen : kb.pcie_generation_at(d.port_max_link_speed);
  const auto* now_gen = kb.pcie_generation_at(d.current_link_speed);
  if (!dev_gen || !port_gen || !now_gen || d.current_link_width <= 0 || d.max_link_width <= 0) return;
  const auto* cap_gen = port_gen->generation < dev_gen->generation ? port_gen : dev_gen;
  const int cap_width =
      d.port_max_link_width > 0 ? std::min(d.max_link_width, d.port_max_link_width) : d.max_link_width;
  const bool narrow = d.current_link_width < cap_width;
  // A slow link is normal at idle (the GPU drops to Gen1 to save power); only a busy GPU's is a fault.
  const bool busy = g.nvml && g.nvml->utilization_gpu_pct > 0 && g.nvml->clocks_event_reasons >= 0 &&
                    !(g.nvml->clocks_event_reasons & 0x1);
  const bool slow = busy && now_gen->generation < cap_gen->generation;
  const auto port_ev = d.port_address.empty() ? std::string()
                                              : fmt::format("port {}: capable of {} x{}", d.port_address,
                                                            d.port_max_link_speed, d.port_max_link_width);
  if (narrow || slow) {
    auto f = make_finding("pcie-link-degraded");
    f.title = fmt::format("GPU {}: PCIe link trained at {} x{}, below the {:.1f} GT/s x{} both ends can do",
                          gpu_label(g), d.current_link_speed, d.current_link_width, cap_gen->gt_per_s, cap_width);
    f.detail = fmt::format(
        "Copies between host and GPU get at most {} per direction instead of {}{}. A narrow link does not come "
        "back by itself: the card is not fully seated, the slot or riser is wired with fewer lanes or shares them "
        "(M.2 or a second slot in use), or the link retrained narrower after errors.",
        rate(*now_gen, d.current_link_width), rate(*cap_gen, cap_width),
        slow && !narrow ? " while the GPU is busy (a link idling slower is normal; this one is under load)" : "");
    f.evidence.push_back(fmt::format("/sys/bus/pci/devices/{}: link {} x{}, capable of {} x{}", d.address,
                                     d.current_link_speed, d.current_link_width, d.max_link_speed, d.max_link_width));
    if (!port_ev.empty()) f.evidence.push_back(port_ev);
    f.evidence.push_back(fmt::format("power/runtime_status: {}", d.runtime_status.empty() ? "?" : d.runtime_status));
    if (g.nvml) f.evidence.push_back(clocks_evidence(*g.nvml));
    f.fix = {v.in_container ? "On the host: reseat the card or move it to a slot wired for all its lanes, and read "
                              "the link's status and errors there."
                            : "Reseat the card, or move it to a slot wired for all its lanes (the board manual says "
                              "which share lanes with M.2 or other slots); then check the link again under load.",
             {},
             {fmt::format("lspci -vv -s {} | grep -E 'LnkCap|LnkSta'", d.address),
              dmesg_check(v.m, "-e 'pcie bus error' -e aer")}};
    out.push_back(std::move(f));
  }
  // Narrow by the slot, not by a fault: said once, so that x8 is not taken for a defect.
  if (d.port_max_link_width > 0 && d.port_max_link_width < d.max_link_width) {
    auto f = make_finding("pcie-link-limited-by-port");
    f.title = fmt::format("GPU {}: the slot's port is x{}, the GPU x{}: the link is narrow by the slot", gpu_label(g),
                          d.port_max_link_width, d.max_link_width);
    f.detail = fmt::format("This link cannot be wider than {} per direction in this slot.", rate(*cap_gen, cap_width));
    f.evidence.push_back(port_ev);
    f.evidence.push_back(
        fmt::format("/sys/bus/pci/devices/{}: capable of {} x{}", d.address, d.max_link_speed, d.max_link_width));
    out.push_back(std::move(f));
  }
}

void power_rules(const View& v, const snapshot::Gpu& g, std::vector<Finding>& out) {
  const auto& n = *g.nvml;
  const int limit = n.power_limit_enforced_w >= 0 ? n.power_limit_enforced_w : n.power_limit_w;
  if (limit >= 0 && n.power_limit_default_w > 0 && limit + 1 < n.power_limit_default_w) {
    auto f = make_finding("gpu-power-limit-lowered");
    const bool capping = n.clocks_event_reasons >= 0 && (n.clocks_event_reasons & 0x4);
    f.title = fmt::format("GPU {}: power limit {} W, below its default {} W{}", gpu_label(g), limit,
                          n.power_limit_default_w, capping ? ": the software power cap is holding its clocks" : "");
    // Set through NVML (nvidia-smi -pl) when the management limit itself is lowered; else by a
    // limiter outside the driver's settings: the laptop's power mode, the platform, the chassis.
    const bool set_by_nvml = n.power_limit_w >= 0 && n.power_limit_w + 1 < n.power_limit_default_w;
    f.detail = fmt::format(
        "Under load the GPU runs {} % or more slower than it can when the limit binds. {}",
        100 - limit * 100 / n.power_limit_default_w,
        set_by_nvml ? "The limit was set through NVML: nvidia-smi -pl, a script or a unit at boot."
                    : "The driver's own limit is the default; another limiter lowers it: on a laptop its power mode "
                      "or running on battery, on a server the chassis or a power-capping service.");
    f.evidence.push_back(fmt::format("NVML GPU {}: enforced limit {} W, set limit {} W, default {} W, range {}-{} W",
                                     n.index, n.power_limit_enforced_w, n.power_limit_w, n.power_limit_default_w,
                                     n.power_limit_min_w, n.power_limit_max_w));
    f.evidence.push_back(clocks_evidence(n));
    const auto cmd = fmt::format("nvidia-smi -i {} -pl {}", n.index, n.power_limit_default_w);
    if (set_by_nvml && !v.in_container)
      f.fix = {"Restore the default limit (and remove what sets it at boot).",
               {fixes::as_root(v.m, cmd)},
               {"grep -rn -e 'nvidia-smi.*-pl' -e 'power-limit' /etc/systemd/system /etc/rc.local 2>/dev/null"}};
    else if (set_by_nvml)
      f.fix = {"On the host: " + cmd + " as root restores the default limit."};
    else
      f.fix = {
          "On a laptop, choose the performance power mode and run on AC power; on a server, ask what caps the "
          "chassis.",
          {},
          nvml_checks(v.m, fmt::format("-i {} -q -d POWER,PERFORMANCE", n.index), "")};
    out.push_back(std::move(f));
  }
  std::int64_t slowing = 0;
  for (const auto& r : k_slowing)
    if (r.bit != 0x4 && n.clocks_event_reasons >= 0 && (static_cast<std::uint64_t>(n.clocks_event_reasons) & r.bit))
      slowing |= static_cast<std::int64_t>(r.bit);
  if (slowing) {
    auto f = make_finding("gpu-clocks-slowed");
    std::string what;
    for (const auto& r : k_slowing)
      if (static_cast<std::uint64_t>(slowing) & r.bit) what += fmt::format("{}{}", what.empty() ? "" : "; ", r.meaning);
    f.title = fmt::format("GPU {}: clocks slowed by {}", gpu_label(g), reasons_text(slowing));
    f.detail = what + ".";
    f.evidence.push_back(clocks_evidence(n));
    f.fix = {std::string(v.in_container ? "On the host: " : "") +
                 "Check the cooling (fans, airflow, dust) and the power supply and its cables; the kernel log and "
                 "nvidia-smi say which limit is hit.",
             {},
             nvml_checks(v.m, fmt::format("-i {} -q -d PERFORMANCE,TEMPERATURE,POWER", n.index), "xid")};
    out.push_back(std::move(f));
  }
}

}  // namespace

void link_power_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  for (const auto* g : v.pci_gpus) {
    if (g->pci.driver != "nvidia" || stuck_asleep(v, *g)) continue;  // that one is gpu-stuck-in-d3cold
    if (asleep(g->pci))
      asleep_rule(*g, out);
    else
      link_rule(v, kb, *g, out);
  }
  for (const auto& g : v.snap.gpus)
    if (g.nvml) power_rules(v, g, out);
}

}  // namespace cudoctor::rules::l1
