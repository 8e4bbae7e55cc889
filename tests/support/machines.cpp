#include "machines.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace fs = std::filesystem;

namespace cudoctor::testing {

namespace {
// What every Linux root has: os-release, the kernel's /proc files, /sys/firmware, ld.so.conf.
void add_linux(FixtureRoot& r, const std::string& os_release, const std::string& kernel, const std::string& host,
               const std::string& cmdline_root) {
  r.file("/etc/os-release", os_release);
  r.file("/proc/sys/kernel/osrelease", kernel + "\n");
  r.file("/proc/sys/kernel/arch", "x86_64\n");
  r.file("/proc/sys/kernel/hostname", host + "\n");
  r.file("/proc/1/cgroup", "0::/init.scope\n");
  r.file("/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-" + kernel + " root=" + cmdline_root + " ro quiet\n");
  r.dir("/sys/firmware");
  add_ld_so_conf(r);
}
}  // namespace

void add_ubuntu_2204(FixtureRoot& r, const std::string& kernel, const std::string& host) {
  add_linux(r,
            "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nVERSION=\"22.04.4 LTS (Jammy "
            "Jellyfish)\"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\n",
            kernel, host, "UUID=0b1e5c3a");
}

void add_debian_12(FixtureRoot& r, const std::string& kernel, const std::string& host) {
  add_linux(
      r,
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 "
      "(bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n",
      kernel, host, "/dev/vda1");
}

void add_kvm_guest_without_gpu(FixtureRoot& r, const std::string& host) {
  add_debian_12(r, "6.1.0-18-amd64", host);
  add_cpuinfo(r, true);
  add_qemu_dmi(r);
  add_virtio_devices(r);
}

void add_cpuinfo(FixtureRoot& r, bool in_vm) {
  r.file(
      "/proc/cpuinfo",
      fmt::format("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) "
                  "Xeon(R) Platinum 8480+\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov "
                  "pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc{} avx512f "
                  "amx_tile\n\n",
                  in_vm ? " hypervisor" : ""));
}

void add_qemu_dmi(FixtureRoot& r) {
  r.file("/sys/devices/virtual/dmi/id/sys_vendor", "QEMU\n");
  r.file("/sys/devices/virtual/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
  r.link("/sys/class/dmi/id", "../../devices/virtual/dmi/id");
}

void add_pci(FixtureRoot& r, const PciSpec& d) {
  const auto port = "/sys/devices/pci0000:00/" + d.port;
  const auto dir = port + "/" + d.address;
  r.file(port + "/max_link_speed", d.port_max_speed + "\n");
  r.file(port + "/max_link_width", fmt::format("{}\n", d.port_max_width));
  r.file(dir + "/vendor", fmt::format("0x{:04x}\n", d.vendor));
  r.file(dir + "/device", fmt::format("0x{:04x}\n", d.device));
  r.file(dir + "/subsystem_vendor", fmt::format("0x{:04x}\n", d.subsystem_vendor));
  r.file(dir + "/subsystem_device", fmt::format("0x{:04x}\n", d.subsystem_device));
  r.file(dir + "/class", fmt::format("0x{:06x}\n", d.class_code));
  r.file(dir + "/current_link_speed", d.current_speed + "\n");
  r.file(dir + "/max_link_speed", d.max_speed + "\n");
  r.file(dir + "/current_link_width", fmt::format("{}\n", d.current_width));
  r.file(dir + "/max_link_width", fmt::format("{}\n", d.max_width));
  r.file(dir + "/power/runtime_status", d.runtime_status + "\n");
  r.file(dir + "/power/control", d.runtime_control + "\n");
  r.file(dir + "/power_state", d.power_state + "\n");
  if ((d.class_code >> 8) == 0x0300) r.file(dir + "/boot_vga", d.boot_vga ? "1\n" : "0\n");
  if (!d.driver.empty()) {
    r.dir("/sys/bus/pci/drivers/" + d.driver);
    r.link(dir + "/driver", "../../../../bus/pci/drivers/" + d.driver);
  }
  r.link("/sys/bus/pci/devices/" + d.address, "../../../devices/pci0000:00/" + d.port + "/" + d.address);
}

PciSpec rtx4060_laptop_gpu() {
  return {.address = "0000:01:00.0",
          .vendor = 0x10de,
          .device = 0x28e0,
          .subsystem_vendor = 0x17aa,
          .subsystem_device = 0x3c5a,
          .class_code = 0x030000,
          .driver = "nvidia",
          .current_speed = "2.5 GT/s PCIe",
          .max_speed = "16.0 GT/s PCIe",
          .current_width = 8,
          .max_width = 8,
          .runtime_status = "suspended",
          .power_state = "D3cold",
          .runtime_control = "auto"};
}

void build_rtx4060_laptop(FixtureRoot& r, const PciSpec& gpu) {
  add_ubuntu_2204(r, "6.5.0-35-generic", "thinkpad");
  add_cpuinfo(r, false);
  add_pci_ids(r);
  add_pci(r, {.address = "0000:00:02.0",
              .vendor = 0x8086,
              .device = 0xa7a0,
              .subsystem_vendor = 0x17aa,
              .subsystem_device = 0x2301,
              .class_code = 0x030000,
              .driver = "i915",
              .boot_vga = true});
  add_pci(r, gpu);
  add_pci(r, {.address = "0000:01:00.1",
              .vendor = 0x10de,
              .device = 0x22be,
              .class_code = 0x040300,
              .driver = "snd_hda_intel"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia", "i915"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_dkms_module(r, "6.5.0-35-generic", "535.104.05");
  add_secure_boot(r, true);
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
}

std::map<std::string, std::string> rtx4060_laptop_nvml() {
  // What NVML says of an idle RTX 4060 Laptop GPU on AC power: Gen1 x8 of Gen4 x8, P8, 115 W.
  return {{"NVML_SIM_NAME", "NVIDIA GeForce RTX 4060 Laptop GPU"},
          {"NVML_SIM_CC", "8.9"},
          {"NVML_SIM_BUS", "1"},
          {"NVML_SIM_PCIE", "1,4,8,8"},
          {"NVML_SIM_POWER", "115,115,115,5,140"},
          {"NVML_SIM_PSTATE", "8"}};
}

void add_virtio_devices(FixtureRoot& r) {
  // A KVM guest's bus: host bridge, virtio network, block and balloon.
  add_pci(r, {.address = "0000:00:00.0", .vendor = 0x8086, .device = 0x29c0, .class_code = 0x060000});
  add_pci(
      r,
      {.address = "0000:00:02.0", .vendor = 0x1af4, .device = 0x1041, .class_code = 0x020000, .driver = "virtio-pci"});
  add_pci(
      r,
      {.address = "0000:00:03.0", .vendor = 0x1af4, .device = 0x1042, .class_code = 0x010000, .driver = "virtio-pci"});
  add_pci(
      r,
      {.address = "0000:00:04.0", .vendor = 0x1af4, .device = 0x1045, .class_code = 0x00ff00, .driver = "virtio-pci"});
}

void add_proc_modules(FixtureRoot& r, const std::vector<std::string>& modules) {
  // Sizes and addresses as a 535 driver on a 6.5 kernel shows them.
  std::string text;
  for (const auto& m : modules) {
    if (m == "nvidia_uvm")
      text += "nvidia_uvm 1523712 0 - Live 0xffffffffc1c00000 (POE)\n";
    else if (m == "nvidia_drm")
      text += "nvidia_drm 77824 4 - Live 0xffffffffc1bde000 (POE)\n";
    else if (m == "nvidia_modeset")
      text += "nvidia_modeset 1306624 6 nvidia_drm, Live 0xffffffffc1a9c000 (POE)\n";
    else if (m == "nvidia")
      text += "nvidia 56741888 278 nvidia_uvm,nvidia_modeset, Live 0xffffffffbe400000 (POE)\n";
    else if (m == "nouveau")
      text += "nouveau 2433024 3 - Live 0xffffffffc0d8e000\n";
    else if (m == "i915")
      text += "i915 3461120 35 - Live 0xffffffffc0e1f000\n";
    else
      text += m + " 16384 0 - Live 0xffffffffc0010000\n";
  }
  text += "drm_kms_helper 212992 2 nvidia_drm,i915, Live 0xffffffffc0c7a000\n";
  r.file("/proc/modules", text, 0444);
}

void add_nvidia_kernel_version(FixtureRoot& r, const std::string& version, bool open_module) {
  const auto line =
      open_module
          ? fmt::format(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {}  Release Build  "
                "(dvs-builder@U16-I3-C03-2-1)  Thu Jan 23 22:50:36 UTC 2025\n",
                version)
          : fmt::format("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {}  Sat Aug 19 01:15:15 UTC 2023\n", version);
  r.file("/proc/driver/nvidia/version", line + "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n",
         0444);
  r.file("/sys/module/nvidia/version", version + "\n", 0444);
  r.file("/sys/module/nvidia/initstate", "live\n", 0444);
}

void add_dkms_module(FixtureRoot& r, const std::string& kernel, const std::string& version) {
  r.file("/lib/modules/" + kernel + "/updates/dkms/nvidia.ko.zst", "(" + version + ")");
}

void add_secure_boot(FixtureRoot& r, bool enabled) {
  std::string v = {'\x06', '\0', '\0', '\0', enabled ? '\x01' : '\x00'};
  r.file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", v);
}

void add_ld_so_conf(FixtureRoot& r) {
  r.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n\n");
  r.file("/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
         "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n");
  r.file("/etc/ld.so.conf.d/libc.conf", "# libc default configuration\n/usr/local/lib\n");
}

void add_driver_libraries(FixtureRoot& r, const std::string& version, const std::string& nvml_library) {
  const std::string dir = "/usr/lib/x86_64-linux-gnu/";
  r.copy(dir + "libcuda.so." + version, cuda_sim_library());
  r.link(dir + "libcuda.so.1", "libcuda.so." + version);
  r.copy(dir + "libnvidia-ml.so." + version, nvml_library);
  r.link(dir + "libnvidia-ml.so.1", "libnvidia-ml.so." + version);
}

std::string debian_535_dir() {
  return CUDOCTOR_VENDOR_DIR "/nvidia535";
}

bool add_debian_535_libraries(FixtureRoot& r) {
  const fs::path src = debian_535_dir() + "/usr/lib/x86_64-linux-gnu/nvidia/current";
  if (!fs::exists(src / "libnvidia-ml.so.1")) return false;
  const std::string dir = "/usr/lib/x86_64-linux-gnu/nvidia/current/";
  for (const auto& e : fs::directory_iterator(src)) {
    const auto name = e.path().filename().string();
    if (fs::is_symlink(e.path()))
      r.link(dir + name, fs::read_symlink(e.path()).string());
    else
      r.copy(dir + name, e.path());
  }
  // Debian's glx-alternative-nvidia: /usr/lib/<triplet>/libcuda.so.1 -> /etc/alternatives/…
  // -> the current driver, with absolute targets.
  for (const std::string lib : {"libcuda.so.1", "libnvidia-ml.so.1"}) {
    const auto alt = "/etc/alternatives/nvidia--" + lib + "-x86_64-linux-gnu";
    r.link(alt, "/usr/lib/x86_64-linux-gnu/nvidia/current/" + lib);
    r.link("/usr/lib/x86_64-linux-gnu/" + lib, alt);
  }
  return true;
}

bool add_device_nodes(FixtureRoot& r, int gpus, unsigned mode, bool uvm) {
  // Majors: 195 is the driver's registered major; nvidia-uvm gets a dynamic one.
  bool ok = r.char_device("/dev/nvidiactl", 195, 255, mode);
  for (int i = 0; i < gpus && ok; ++i)
    ok = r.char_device(fmt::format("/dev/nvidia{}", i), 195, static_cast<unsigned>(i), mode);
  if (ok) ok = r.char_device("/dev/nvidia-modeset", 195, 254, mode);
  if (ok && uvm)
    ok = r.char_device("/dev/nvidia-uvm", 508, 0, mode) && r.char_device("/dev/nvidia-uvm-tools", 508, 1, mode);
  return ok;
}

std::string nvml_sim_library() {
  return CUDOCTOR_NVML_SIM;
}
std::string cuda_sim_library() {
  return CUDOCTOR_CUDA_SIM;
}

bool add_cuda13_toolkit_runtime(FixtureRoot& r) {
  const fs::path lib = "/usr/local/cuda-13.0/lib";
  if (!fs::exists(lib / "libcudart.so.13")) return false;
  r.copy("/usr/local/cuda-13.0/lib/libcudart.so.13", lib / "libcudart.so.13");
  r.link("/usr/local/cuda-13.0/lib/libcudart.so", "libcudart.so.13");
  r.copy("/usr/local/cuda-13.0/lib/stubs/libcuda.so", lib / "stubs/libcuda.so");
  r.link("/usr/local/cuda-13.0/lib64", "lib");
  r.link("/usr/local/cuda", "/usr/local/cuda-13.0");
  return true;
}

void add_pci_ids(FixtureRoot& r) {
  r.copy("/usr/share/misc/pci.ids", std::string(CUDOCTOR_FIXTURES_DIR) + "/pci.ids");
}

void build_docker_on_h100_host(FixtureRoot& r) {
  add_ubuntu_2204(r, "5.15.0-105-generic", "3f2a9c1b7d4e");
  add_cpuinfo(r, false);
  r.file("/.dockerenv", "");
  add_pci(r, {.address = "0000:1b:00.0", .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
}

void build_secure_boot_blocks_dkms(FixtureRoot& r) {
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000});
  add_proc_modules(r, {"i915"});
  add_dkms_module(r, "6.5.0-35-generic", "535.104.05");
  add_secure_boot(r, true);
}

}  // namespace cudoctor::testing
