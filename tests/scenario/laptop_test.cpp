// Laptops and PCIe links: a link trained narrower than both its ends while the GPU is awake,
// an idle GPU asleep in D3cold (normal), a slot narrower than the card, a power limit below the
// default and clocks slowed by heat, on fixture sysfs trees and the simulated NVML.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "../support/machines.hpp"
#include "../support/scenario.hpp"

namespace cudoctor::testing {
namespace {

// The laptop's GPU awake (runtime PM active, D0) with its link at speed.
PciSpec awake_gpu(const std::string& speed) {
  auto gpu = rtx4060_laptop_gpu();
  gpu.runtime_status = "active";
  gpu.power_state = "D0";
  gpu.current_speed = speed;
  return gpu;
}

TEST(ScenarioLaptop, ActiveLinkAtX4OfX8IsAWarningWithWhatItCosts) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  auto gpu = awake_gpu("16.0 GT/s PCIe");
  gpu.current_width = 4;
  build_rtx4060_laptop(r, gpu);
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto nvml = rtx4060_laptop_nvml();
  nvml["NVML_SIM_PCIE"] = "4,4,4,8";
  const auto c = check_root(r, {}, nvml);
  const auto f = c.finding("pcie-link-degraded");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "warn");
  EXPECT_EQ(f["title"],
            "GPU 0000:01:00.0 NVIDIA GeForce RTX 4060 Laptop GPU: PCIe link trained at 16.0 GT/s PCIe x4, below the "
            "16.0 GT/s x8 both ends can do");
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "at most 7.9 GB/s per direction instead of 15.8 GB/s"))
      << f["detail"];
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "/sys/bus/pci/devices/0000:01:00.0: link 16.0 GT/s PCIe x4, capable of 16.0 GT/s PCIe x8"))
      << ev;
  EXPECT_TRUE(contains(ev, "port 0000:00:01.0: capable of 16.0 GT/s PCIe x16")) << ev;
  EXPECT_EQ(f["fix"]["checks"][0], "lspci -vv -s 0000:01:00.0 | grep -E 'LnkCap|LnkSta'");
  EXPECT_TRUE(f["fix"]["commands"].empty()) << "reseating a card is not a command";
  EXPECT_FALSE(c.has("gpu-runtime-suspended")) << c.ids();
  EXPECT_FALSE(c.has("pcie-link-limited-by-port")) << "x8 by design in an x16 port: " << c.ids();
}

TEST(ScenarioLaptop, IdleGpuAsleepAt2_5GtsIsHealthy) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);  // runtime-suspended, D3cold, 2.5 GT/s x8
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, rtx4060_laptop_nvml());
  EXPECT_EQ(c.json_run.exit_code, 0) << c.ids();
  EXPECT_TRUE(c.report["verdict"]["healthy"].get<bool>());
  for (const char* id : {"pcie-link-degraded", "gpu-power-limit-lowered", "gpu-clocks-slowed"})
    EXPECT_FALSE(c.has(id)) << id << ": " << c.ids();
  const auto f = c.finding("gpu-runtime-suspended");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "info");
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "/sys/bus/pci/devices/0000:01:00.0/power/runtime_status: suspended")) << ev;
  EXPECT_TRUE(contains(ev, "/sys/bus/pci/devices/0000:01:00.0/power_state: D3cold")) << ev;
  EXPECT_TRUE(contains(ev, "link now: 2.5 GT/s PCIe x8 (capable of 16.0 GT/s PCIe x8)")) << ev;
}

TEST(ScenarioLaptop, IntelGraphicsDrivesTheDisplayAndTheGeForceComputes) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);  // i915 at 00:02.0 has boot_vga 1; the GeForce sleeps with power/control auto
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, rtx4060_laptop_nvml());
  const auto f = c.finding("gpu-hybrid-graphics");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "info");
  EXPECT_TRUE(contains(f["title"].get<std::string>(), "the display runs on Intel Corporation")) << f["title"];
  EXPECT_TRUE(contains(f["title"].get<std::string>(), "0000:01:00.0 NVIDIA GeForce RTX 4060 Laptop GPU computes"))
      << f["title"];
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "/sys/bus/pci/devices/0000:00:02.0/boot_vga: 1")) << ev;
  EXPECT_TRUE(contains(ev, "/sys/bus/pci/devices/0000:01:00.0/boot_vga: 0")) << ev;
  EXPECT_TRUE(contains(ev, "power/control: auto (runtime power management on: it sleeps when idle)")) << ev;
  EXPECT_TRUE(c.report["verdict"]["healthy"].get<bool>()) << c.ids();
}

TEST(ScenarioLaptop, GpuThatStaysInD3coldWhenNvmlOpensItIsTheBreak) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);  // D3cold, runtime-suspended
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto nvml = rtx4060_laptop_nvml();
  nvml["NVML_SIM_GPUS"] = "0";  // NVML starts, and lists no GPU: the driver could not power it up
  const auto c = check_root(r, {}, nvml);
  const auto f = c.finding("gpu-stuck-in-d3cold");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(c.report["verdict"]["break_finding"], "gpu-stuck-in-d3cold") << c.ids();
  EXPECT_EQ(f["title"],
            "GPU 0000:01:00.0 AD107M [GeForce RTX 4060 Max-Q / Mobile] is powered down (D3cold) and did not wake when "
            "NVML opened the driver")
      << f["title"];
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "/sys/bus/pci/devices/0000:01:00.0/power_state: D3cold")) << ev;
  EXPECT_TRUE(contains(ev, "NVML: initialised, driver 535.104.05, 0 GPUs listed, none at 0000:01:00.0")) << ev;
  // As root where the fixture's user is root, through sudo otherwise.
  std::vector<std::string> cmds;
  for (const auto& x : f["fix"]["commands"]) {
    auto cmd = x.get<std::string>();
    for (auto at = cmd.find("sudo "); at != std::string::npos; at = cmd.find("sudo ")) cmd.erase(at, 5);
    cmds.push_back(cmd);
  }
  ASSERT_EQ(cmds.size(), 3u) << f["fix"];
  EXPECT_EQ(cmds[0], "echo on | tee /sys/bus/pci/devices/0000:01:00.0/power/control");
  EXPECT_EQ(cmds[1],
            "echo 'options nvidia NVreg_DynamicPowerManagement=0x00' | tee /etc/modprobe.d/nvidia-runtime-d3-off.conf");
  EXPECT_EQ(cmds[2], "update-initramfs -u");
  EXPECT_EQ(f["fix"]["checks"][0], "cat /proc/driver/nvidia/gpus/0000:01:00.0/power");
  // Not the "fallen off the bus" of a GPU NVML lost, and not the normal sleep of an idle one.
  EXPECT_FALSE(c.has("gpu-count-mismatch")) << c.ids();
  EXPECT_FALSE(c.has("gpu-runtime-suspended")) << c.ids();
}

TEST(ScenarioLaptop, AwakeButIdleAtGen1IsNotAWarning) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r, awake_gpu("2.5 GT/s PCIe"));  // 2.5 GT/s x8 while idle: power management, not a fault
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, rtx4060_laptop_nvml());
  EXPECT_FALSE(c.has("pcie-link-degraded")) << c.ids();
  EXPECT_TRUE(c.report["verdict"]["healthy"].get<bool>()) << c.ids();
}

TEST(ScenarioLaptop, BusyGpuStillAtGen1IsAWarning) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r, awake_gpu("2.5 GT/s PCIe"));
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto nvml = rtx4060_laptop_nvml();
  nvml["NVML_SIM_UTIL"] = "97";
  nvml["NVML_SIM_REASONS"] = "0";
  nvml["NVML_SIM_PSTATE"] = "0";
  const auto c = check_root(r, {}, nvml);
  const auto f = c.finding("pcie-link-degraded");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "at most 2.0 GB/s per direction instead of 15.8 GB/s"))
      << f["detail"];
  EXPECT_TRUE(contains(joined_evidence(f), "97 % busy")) << f["evidence"];
}

TEST(ScenarioLaptop, PowerCappedByThePlatformNamesTheCap) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r, awake_gpu("16.0 GT/s PCIe"));
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto nvml = rtx4060_laptop_nvml();
  nvml["NVML_SIM_POWER"] = "115,60,115,5,140";  // the driver's limit is the default; the platform enforces 60 W
  nvml["NVML_SIM_REASONS"] = "0x4";
  nvml["NVML_SIM_UTIL"] = "100";
  nvml["NVML_SIM_PSTATE"] = "0";
  nvml["NVML_SIM_PCIE"] = "4,4,8,8";
  const auto c = check_root(r, {}, nvml);
  const auto f = c.finding("gpu-power-limit-lowered");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "warn");
  EXPECT_EQ(f["title"],
            "GPU 0000:01:00.0 NVIDIA GeForce RTX 4060 Laptop GPU: power limit 60 W, below its default 115 W: the "
            "software power cap is holding its clocks");
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "enforced limit 60 W, set limit 115 W, default 115 W, range 5-140 W")) << ev;
  EXPECT_TRUE(contains(ev, "clocks-event reasons SwPowerCap (0x4)")) << ev;
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "on a laptop its power mode")) << f["detail"];
  EXPECT_TRUE(f["fix"]["commands"].empty()) << "nvidia-smi -pl cannot lift a limit the platform enforces";
  EXPECT_FALSE(c.has("pcie-link-degraded")) << c.ids();
  EXPECT_FALSE(c.has("gpu-clocks-slowed")) << "the power cap is this finding's: " << c.ids();
}

// A workstation with an RTX 4090 (x16) in a slot whose root port is x8, drivers 535.104.05.
void build_workstation(FixtureRoot& r, int port_width) {
  add_ubuntu_2204(r, "6.5.0-35-generic", "ws-01");
  add_cpuinfo(r, false);
  add_pci_ids(r);
  add_pci(r, {.address = "0000:01:00.0",
              .device = 0x2684,
              .driver = "nvidia",
              .current_width = port_width,
              .port_max_width = port_width});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_dkms_module(r, "6.5.0-35-generic", "535.104.05");
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
  r.file("/usr/bin/sudo", "", 04755);
}
const std::map<std::string, std::string> k_rtx4090 = {{"NVML_SIM_NAME", "NVIDIA GeForce RTX 4090"},
                                                      {"NVML_SIM_CC", "8.9"},
                                                      {"NVML_SIM_PCIE", "4,4,8,16"},
                                                      {"NVML_SIM_POWER", "450,450,450,150,600"},
                                                      {"NVML_SIM_UTIL", "0"}};

TEST(ScenarioWorkstation, X16CardInAnX8SlotIsNarrowByTheSlotNotDegraded) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_workstation(r, 8);
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, k_rtx4090);
  EXPECT_FALSE(c.has("pcie-link-degraded")) << c.ids();
  const auto f = c.finding("pcie-link-limited-by-port");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"],
            "GPU 0000:01:00.0 NVIDIA GeForce RTX 4090: the slot's port is x8, the GPU x16: the link is narrow by the "
            "slot");
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "15.8 GB/s")) << f["detail"];
}

TEST(ScenarioWorkstation, AVirtualMachinesEmulatedPortIsNotTakenForTheSlot) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_workstation(r, 16);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .driver = "nvidia", .port_max_width = 1});
  add_cpuinfo(r, true);  // a KVM guest with the GPU passed through
  add_qemu_dmi(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, k_rtx4090);
  EXPECT_EQ(c.report["host"]["hypervisor"]["kind"], "kvm") << c.report["host"]["hypervisor"];
  EXPECT_FALSE(c.has("pcie-link-limited-by-port")) << c.ids();
  EXPECT_FALSE(c.has("pcie-link-degraded")) << c.ids();
}

TEST(ScenarioWorkstation, LimitLoweredWithNvidiaSmiIsRestoredAsRoot) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_workstation(r, 16);
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto nvml = k_rtx4090;
  nvml["NVML_SIM_POWER"] = "300,300,450,150,600";
  const auto c = check_root(r, {}, nvml);
  const auto f = c.finding("gpu-power-limit-lowered");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "GPU 0000:01:00.0 NVIDIA GeForce RTX 4090: power limit 300 W, below its default 450 W");
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "set through NVML")) << f["detail"];
  ASSERT_EQ(f["fix"]["commands"].size(), 1u) << f["fix"];
  EXPECT_TRUE(f["fix"]["commands"][0] == "sudo nvidia-smi -i 0 -pl 450" ||
              f["fix"]["commands"][0] == "nvidia-smi -i 0 -pl 450")
      << f["fix"];
}

TEST(ScenarioWorkstation, ThermalSlowdownNamesEachReason) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_workstation(r, 16);
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto nvml = k_rtx4090;
  nvml["NVML_SIM_REASONS"] = "0x48";
  nvml["NVML_SIM_UTIL"] = "100";
  nvml["NVML_SIM_TEMP"] = "91";
  const auto c = check_root(r, {}, nvml);
  const auto f = c.finding("gpu-clocks-slowed");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"],
            "GPU 0000:01:00.0 NVIDIA GeForce RTX 4090: clocks slowed by HwSlowdown (0x8), HwThermalSlowdown (0x40)");
  EXPECT_TRUE(contains(joined_evidence(f), "100 % busy, 91 C")) << f["evidence"];
  EXPECT_FALSE(c.has("gpu-power-limit-lowered")) << c.ids();
}

}  // namespace
}  // namespace cudoctor::testing
