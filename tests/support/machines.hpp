#pragma once
// Builders for the parts of real machines, in the formats the kernel, distributions and
// NVIDIA's packages write them: os-release, /proc/modules, /proc/driver/nvidia/version,
// sysfs PCI devices, efivars, the driver's library layout.
#include <map>
#include <string>
#include <vector>

#include "fixture_root.hpp"

namespace cudoctor::testing {

void add_ubuntu_2204(FixtureRoot& r, const std::string& kernel = "6.5.0-35-generic",
                     const std::string& host = "gpu-box");
void add_debian_12(FixtureRoot& r, const std::string& kernel = "6.1.0-18-amd64",
                   const std::string& host = "debian-box");

// A Debian KVM guest with virtio devices and no GPU passed through.
void add_kvm_guest_without_gpu(FixtureRoot& r, const std::string& host = "debian-box");

// /proc/cpuinfo with one CPU; with the hypervisor flag when in_vm.
void add_cpuinfo(FixtureRoot& r, bool in_vm);
void add_qemu_dmi(FixtureRoot& r);

struct PciSpec {
  std::string address;  // "0000:01:00.0"
  unsigned vendor = 0x10de;
  unsigned device = 0;
  unsigned subsystem_vendor = 0;
  unsigned subsystem_device = 0;
  unsigned class_code = 0x030000;
  std::string driver;  // "" for none
  std::string current_speed = "16.0 GT/s PCIe";
  std::string max_speed = "16.0 GT/s PCIe";
  int current_width = 16;
  int max_width = 16;
  std::string runtime_status = "active";
  bool boot_vga = false;
  std::string power_state = "D0";      // power_state (kernel 5.17 and later)
  std::string runtime_control = "on";  // power/control
  // The port the link goes to (a root port): the parent directory in /sys/devices.
  std::string port = "0000:00:01.0";
  std::string port_max_speed = "16.0 GT/s PCIe";
  int port_max_width = 16;
};
// A PCI function as sysfs shows it: the device directory under /sys/devices and the
// relative links from /sys/bus/pci/devices and to the bound driver.
void add_pci(FixtureRoot& r, const PciSpec& d);
void add_virtio_devices(FixtureRoot& r);

// An RTX 4060 Laptop GPU (AD107M, x8 by design), runtime-suspended in D3cold next to Intel graphics.
PciSpec rtx4060_laptop_gpu();
// A laptop with Intel graphics driving the display and that GPU (or gpu), driver 535.104.05 from
// DKMS, Secure Boot on with the module signed and loaded.
// A docker container (/.dockerenv, host name 3f2a9c1b7d4e) on an H100 host with driver
// 535.104.05 loaded: what every container scenario starts from; each adds what the toolkit
// mounted (nothing, the utility capability's files, …).
void build_docker_on_h100_host(FixtureRoot& r);
// An RTX 4090 desktop whose DKMS-built nvidia 535.104.05 module Secure Boot keeps out (only
// i915 loaded, SecureBoot efivar set).
void build_secure_boot_blocks_dkms(FixtureRoot& r);
void build_rtx4060_laptop(FixtureRoot& r, const PciSpec& gpu = rtx4060_laptop_gpu());
// The simulated NVML's settings for that GPU, idle on AC power.
std::map<std::string, std::string> rtx4060_laptop_nvml();

// /proc/modules lines for the given modules as a loaded NVIDIA driver shows them.
void add_proc_modules(FixtureRoot& r, const std::vector<std::string>& modules);
// /proc/driver/nvidia/version and /sys/module/nvidia/version as the driver writes them.
void add_nvidia_kernel_version(FixtureRoot& r, const std::string& version, bool open_module = false);
// nvidia.ko installed by DKMS for the kernel.
void add_dkms_module(FixtureRoot& r, const std::string& kernel, const std::string& version);
// UEFI SecureBoot variable (4 attribute bytes + value).
void add_secure_boot(FixtureRoot& r, bool enabled);
// /etc/ld.so.conf with the multiarch include, as Debian and Ubuntu ship it.
void add_ld_so_conf(FixtureRoot& r);

// The user-space driver as NVIDIA's packages lay it out: libX.so.VERSION and the
// libX.so.1 link. libnvidia-ml is a copy of nvml_library (real or simulated), libcuda a
// copy of the simulated driver API (tests/sim/cuda_sim.c).
void add_driver_libraries(FixtureRoot& r, const std::string& version, const std::string& nvml_library);
// The Debian 535 packages unpacked by scripts/install-deps.sh --test, with Debian's
// alternatives links. False when they are not there.
bool add_debian_535_libraries(FixtureRoot& r);
std::string debian_535_dir();

// /dev/nvidiactl, /dev/nvidia0..n-1, /dev/nvidia-uvm(-tools), /dev/nvidia-modeset with the
// driver's majors and modes. False when device nodes cannot be made here.
bool add_device_nodes(FixtureRoot& r, int gpus, unsigned mode = 0666, bool uvm = true);

// The simulated libcuda built with the tests (tests/sim/cuda_sim.c).
std::string cuda_sim_library();
// CUDA 13.0's libcudart.so.13 (and the stub libcuda) from the toolkit at /usr/local/cuda-13.0,
// laid out in the fixture as the toolkit has them. False when this machine lacks it.
bool add_cuda13_toolkit_runtime(FixtureRoot& r);

// The simulated NVML library built with the tests.
std::string nvml_sim_library();
// /usr/share/misc/pci.ids: the excerpt in tests/fixtures/pci.ids (the devices the scenarios
// use), so names in reports do not depend on the host's pci.ids or its version.
void add_pci_ids(FixtureRoot& r);

}  // namespace cudoctor::testing
