// Scenarios: whole machines built on fixture roots, checked through the cudoctor binary as a
// user runs it. Each asserts the exit code, the findings in the JSON report and the text.
#include "machines.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

// A DGX-like server: 8 H100 SXM5 on their real bus numbers, nvidia-modprobe setuid.
const char* k_h100_buses[] = {"1b", "43", "52", "61", "9d", "c3", "d1", "df"};
void build_h100_server(FixtureRoot& r, int gpus = 8) {
  add_ubuntu_2204(r, "5.15.0-105-generic", "dgx-07");
  add_cpuinfo(r, false);
  add_pci_ids(r);
  for (int i = 0; i < gpus; ++i)
    add_pci(r, {.address = std::string("0000:") + k_h100_buses[i] + ":00.0",
                .vendor = 0x10de,
                .device = 0x2330,
                .subsystem_vendor = 0x10de,
                .subsystem_device = 0x16c1,
                .class_code = 0x030200,
                .driver = "nvidia",
                .current_speed = "32.0 GT/s PCIe",
                .max_speed = "32.0 GT/s PCIe"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  r.file("/lib/modules/5.15.0-105-generic/kernel/nvidia-535srv/nvidia.ko", "");
  r.file("/usr/bin/nvidia-modprobe", "", 04755);
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
}
std::map<std::string, std::string> h100_nvml(int gpus) {
  std::string buses;
  for (int i = 0; i < 8; ++i) buses += std::string(i ? "," : "") + k_h100_buses[i];
  return {{"NVML_SIM_GPUS", std::to_string(gpus)}, {"NVML_SIM_BUSES", buses}};
}

TEST(ScenarioLaptop, HealthyRtx4060LaptopNextToIntelGraphics) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, rtx4060_laptop_nvml());
  EXPECT_EQ(c.json_run.exit_code, 0) << c.ids() << c.text_run.out;
  EXPECT_TRUE(c.report["verdict"]["healthy"].get<bool>());
  EXPECT_TRUE(c.report["verdict"]["break_layer"].is_null());
  for (const char* id : {"gpus-present", "nvidia-module-loaded", "device-nodes-ok", "driver-libraries-ok", "nvml-ok"})
    EXPECT_TRUE(c.has(id)) << id << " missing: " << c.ids();
  // The GPU as the bus shows it: an x8 part idling at 2.5 GT/s, runtime-suspended.
  const auto& gpu = c.report["gpus"][0];
  EXPECT_EQ(gpu["pci"]["address"], "0000:01:00.0");
  EXPECT_EQ(gpu["pci"]["device_id"], 0x28e0);
  EXPECT_EQ(gpu["pci"]["current_link_width"], 8);
  EXPECT_EQ(gpu["pci"]["max_link_speed"], "16.0 GT/s PCIe");
  EXPECT_EQ(gpu["pci"]["runtime_status"], "suspended");
  EXPECT_EQ(gpu["nvml"]["name"], "NVIDIA GeForce RTX 4060 Laptop GPU");
  EXPECT_EQ(gpu["nvml"]["compute_capability"], "8.9");
  ASSERT_EQ(c.report["gpus"].size(), 1u) << "the HDMI audio function is not a GPU";
  ASSERT_EQ(c.report["driver"]["other_display_devices"].size(), 1u);
  EXPECT_EQ(c.report["driver"]["other_display_devices"][0]["driver"], "i915");
  EXPECT_EQ(c.report["host"]["secure_boot"], true);
  EXPECT_EQ(gpu["pci"]["device_name"], "AD107M [GeForce RTX 4060 Max-Q / Mobile]");
  EXPECT_EQ(c.report["runtime"]["driver_api"]["devices"][0]["name"], "NVIDIA GeForce RTX 4060 Laptop GPU")
      << "the driver API names the GPU NVML names";
  EXPECT_EQ(c.text_run.exit_code, 0);
  expect_goldens("laptop-rtx4060", c, r);
}

TEST(ScenarioServer, EightH100sAllSeenByNvml) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_h100_server(r);
  ASSERT_TRUE(add_device_nodes(r, 8));
  const auto c = check_root(r, {}, h100_nvml(8));
  EXPECT_EQ(c.json_run.exit_code, 0) << c.ids();
  EXPECT_EQ(c.finding("gpus-present")["title"], "8 NVIDIA GPUs on the PCI bus");
  EXPECT_TRUE(c.has("nvml-ok") && c.has("device-nodes-ok")) << c.ids();
  EXPECT_EQ(c.report["runtime"]["driver_api"]["device_count"], 8);
  ASSERT_EQ(c.report["gpus"].size(), 8u);
  for (const auto& g : c.report["gpus"]) {
    ASSERT_FALSE(g["nvml"].is_null()) << g["pci"]["address"] << " not joined to NVML";
    EXPECT_EQ(g["nvml"]["pci_bus_id"], g["pci"]["address"]);
    EXPECT_EQ(g["pci"]["class_code"], 0x030200);
  }
  EXPECT_FALSE(c.has("gpu-count-mismatch"));
  expect_goldens("server-8xh100", c, r);
}

TEST(ScenarioServer, GpuMissingFromNvmlIsNamed) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_h100_server(r);
  ASSERT_TRUE(add_device_nodes(r, 8));
  const auto c = check_root(r, {}, h100_nvml(7));
  const auto w = c.finding("gpu-count-mismatch");
  ASSERT_FALSE(w.is_null()) << c.ids();
  EXPECT_EQ(w["severity"], "warn");
  EXPECT_EQ(w["title"], "NVML sees 7 of the 8 GPUs bound to nvidia");
  EXPECT_TRUE(contains(joined_evidence(w), "0000:df:00.0"));
  EXPECT_EQ(c.json_run.exit_code, 0) << "a warning is not a break";
  expect_goldens("server-gpu-missing-from-nvml", c, r);
}

TEST(ScenarioVm, NoGpuPassedThrough) {
  FixtureRoot r;
  add_kvm_guest_without_gpu(r);
  const auto c = check_root(r);
  EXPECT_EQ(c.json_run.exit_code, 1);
  EXPECT_EQ(c.report["verdict"]["break_layer"], "L1");
  EXPECT_EQ(c.report["verdict"]["break_finding"], "no-nvidia-gpu");
  const auto f = c.finding("no-nvidia-gpu");
  EXPECT_TRUE(contains(joined_evidence(f), "DMI: vendor \"QEMU\""));
  EXPECT_EQ(c.report["host"]["hypervisor"]["kind"], "kvm");
  EXPECT_TRUE(c.has("in-virtual-machine"));
  EXPECT_TRUE(c.report["gpus"].empty());
  EXPECT_EQ(c.text_run.exit_code, 1);
  // No module, node or library complaints pile up behind the real cause.
  EXPECT_FALSE(c.has("nvidia-module-not-loaded"));
  EXPECT_FALSE(c.has("device-nodes-missing"));
  EXPECT_FALSE(c.has("device-nodes-created-on-demand"));
  expect_goldens("vm-no-gpu", c, r);
}

TEST(ScenarioNouveau, NouveauHoldsRtx4090) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_cpuinfo(r, false);
  add_pci_ids(r);
  add_pci(r,
          {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nouveau", .boot_vga = true});
  add_proc_modules(r, {"nouveau"});
  const auto c = check_root(r);
  EXPECT_EQ(c.json_run.exit_code, 1);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "nouveau-bound");
  const auto f = c.finding("nouveau-bound");
  EXPECT_TRUE(contains(f["title"], "0000:01:00.0"));
  bool blacklists = false;
  for (const auto& cmd : f["fix"]["commands"]) blacklists = blacklists || contains(cmd, "blacklist nouveau");
  EXPECT_TRUE(blacklists);
  EXPECT_FALSE(c.has("nvidia-module-not-loaded")) << "nouveau-bound already explains it";
  expect_goldens("nouveau-rtx4090", c, r);
}

TEST(ScenarioUpgrade, DriverUpgradedWithoutReboot) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_cpuinfo(r, false);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_driver_libraries(r, "535.129.03", nvml_sim_library());
  r.file("/usr/bin/nvidia-modprobe", "", 04755);
  r.file("/usr/bin/sudo", "", 04755);
  const auto c = check_root(r, {}, {{"NVML_SIM_MODE", "mismatch"}});
  EXPECT_EQ(c.json_run.exit_code, 1);
  const auto f = c.finding("driver-version-mismatch");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "Kernel module 535.104.05 but user-space driver 535.129.03");
  EXPECT_TRUE(contains(joined_evidence(f), "Driver/library version mismatch"));
  EXPECT_EQ(f["fix"]["commands"][0], ::geteuid() == 0 ? "reboot" : "sudo reboot") << "root needs no sudo";
  EXPECT_FALSE(c.has("nvml-error")) << "the mismatch finding carries NVML's answer";
  EXPECT_FALSE(c.has("nvml-error-explained-above"));
  // libcuda fails as the real one does on a mismatch, not with a working H100.
  EXPECT_EQ(c.report["runtime"]["driver_api"]["init"]["code"], 803);
  expect_goldens("driver-upgraded-without-reboot", c, r);
}

TEST(ScenarioContainer, DockerStartedWithoutGpus) {
  FixtureRoot r;
  build_docker_on_h100_host(r);
  r.dir("/dev");
  const auto c = check_root(r);
  EXPECT_EQ(c.json_run.exit_code, 1);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "container-no-gpu-access");
  const auto f = c.finding("container-no-gpu-access");
  EXPECT_TRUE(contains(f["detail"], "docker container has no /dev/nvidia* devices and no libcuda.so.1"));
  // docker run is the host's command: said in the text, not given as one for the container.
  EXPECT_TRUE(contains(f["fix"]["text"], "docker run --gpus all")) << f["fix"]["text"];
  EXPECT_TRUE(f["fix"]["commands"].empty());
  EXPECT_EQ(c.report["host"]["container"]["kind"], "docker");
  EXPECT_FALSE(c.has("device-nodes-missing"));
  EXPECT_FALSE(c.has("device-nodes-created-on-demand"));
  EXPECT_FALSE(c.has("driver-library-missing"));
  expect_goldens("docker-without-gpus", c, r);
}

TEST(ScenarioContainer, KubernetesPodWithoutGpuRequest) {
  FixtureRoot r;
  add_ubuntu_2204(r, "5.15.0-105-generic", "trainer-0");
  r.file("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "ml\n");
  add_pci(r, {.address = "0000:1b:00.0", .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  const auto c = check_root(r, {}, {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}});
  EXPECT_EQ(c.report["host"]["container"]["kind"], "kubernetes");
  const auto f = c.finding("container-no-gpu-access");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["fix"]["text"], "nvidia.com/gpu"));
  expect_goldens("kubernetes-without-gpu-request", c, r);
}

TEST(ScenarioNodes, SomeNodesMissingAndNoUvm) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_h100_server(r, 2);
  std::filesystem::remove(r.host("/usr/bin/nvidia-modprobe"));
  add_proc_modules(r, {"nvidia_drm", "nvidia_modeset", "nvidia"});
  ASSERT_TRUE(r.char_device("/dev/nvidiactl", 195, 255, 0666));
  ASSERT_TRUE(r.char_device("/dev/nvidia0", 195, 0, 0666));
  // Without nvidia-uvm cuInit fails with 999, as the finding says.
  auto env = h100_nvml(2);
  env["CUDA_SIM_MODE"] = "unknown_error";
  const auto c = check_root(r, {}, env);
  EXPECT_EQ(c.json_run.exit_code, 1);
  const auto nodes = c.finding("device-nodes-missing");
  ASSERT_FALSE(nodes.is_null()) << c.ids();
  EXPECT_EQ(nodes["severity"], "error");
  const auto uvm = c.finding("uvm-module-not-loaded");
  ASSERT_FALSE(uvm.is_null());
  EXPECT_EQ(uvm["severity"], "error");
  EXPECT_TRUE(contains(joined_evidence(uvm), "/dev/nvidia-uvm: missing"));
  EXPECT_EQ(uvm["fix"]["commands"][0], "modprobe nvidia-uvm") << "device nodes need root, who needs no sudo";
  expect_goldens("nodes-missing-no-uvm", c, r);
}

TEST(ScenarioNodes, SetuidHelperMakesMissingNodesAWarning) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_h100_server(r, 2);
  add_proc_modules(r, {"nvidia_drm", "nvidia_modeset", "nvidia"});
  ASSERT_TRUE(r.char_device("/dev/nvidiactl", 195, 255, 0666));
  const auto c = check_root(r, {}, h100_nvml(2));
  EXPECT_EQ(c.finding("device-nodes-created-on-demand")["severity"], "warn") << c.ids();
  EXPECT_EQ(c.finding("uvm-loaded-on-demand")["severity"], "warn") << c.ids();
  EXPECT_FALSE(c.has("device-nodes-missing"));
  EXPECT_FALSE(c.has("uvm-module-not-loaded"));
  EXPECT_EQ(c.json_run.exit_code, 0) << c.ids();
  expect_goldens("nodes-missing-setuid-helper", c, r);
}

TEST(ScenarioNodes, NodesThisUserMayNotOpen) {
  REQUIRE_DEVICE_NODES();
  if (!std::filesystem::exists("/usr/bin/setpriv")) GTEST_SKIP() << "needs setpriv (util-linux)";
  FixtureRoot r;
  build_h100_server(r, 1);
  ASSERT_TRUE(add_device_nodes(r, 1, 0660));
  // A user who may not open the nodes gets no device from cuInit.
  auto env = h100_nvml(1);
  env["CUDA_SIM_MODE"] = "no_device";
  Checked c;
  c.json_run = run_cudoctor({"--root", r.path().string(), "--runtime", "--json"}, env,
                            {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  c.report = nlohmann::json::parse(c.json_run.out, nullptr, false);
  ASSERT_FALSE(c.report.is_discarded()) << "no JSON report; exit " << c.json_run.exit_code << ", signal "
                                        << c.json_run.signal << "\nstdout: " << c.json_run.out
                                        << "\nstderr: " << c.json_run.err;
  EXPECT_EQ(c.json_run.exit_code, 1) << c.json_run.err;
  const auto f = c.finding("device-nodes-not-permitted");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(joined_evidence(f), "/dev/nvidiactl: crw-rw---- uid 0 gid 0"));
  EXPECT_TRUE(contains(joined_evidence(f), "user uid 65534 groups 65534"));
  expect_goldens("nodes-not-permitted", c, r);
}

TEST(ScenarioModule, SecureBootKeepsDkmsModuleOut) {
  FixtureRoot r;
  build_secure_boot_blocks_dkms(r);
  const auto c = check_root(r);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "module-blocked-by-secure-boot") << c.ids();
  const auto f = c.finding("module-blocked-by-secure-boot");
  EXPECT_TRUE(contains(joined_evidence(f), "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c: value 1"));
  bool mok = false;
  for (const auto& cmd : f["fix"]["commands"]) mok = mok || contains(cmd, "mokutil --import");
  EXPECT_TRUE(mok) << f["fix"];
  expect_goldens("secure-boot-blocks-dkms", c, r);
}

TEST(ScenarioModule, BlacklistNamesFileAndLine) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000});
  add_proc_modules(r, {"i915"});
  add_dkms_module(r, "6.5.0-35-generic", "535.104.05");
  r.file("/etc/modprobe.d/blacklist-nvidia.conf",
         "# Automatically generated by EnvyControl\n\nblacklist nouveau\nblacklist nvidia\nblacklist nvidia_drm\n");
  const auto c = check_root(r);
  const auto f = c.finding("nvidia-module-blacklisted");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(joined_evidence(f), "/etc/modprobe.d/blacklist-nvidia.conf:4: blacklist nvidia"));
  EXPECT_EQ(c.json_run.exit_code, 1);
  expect_goldens("module-blacklisted", c, r);
}

TEST(ScenarioModule, NoModuleBuiltForRunningKernel) {
  FixtureRoot r;
  add_ubuntu_2204(r, "6.8.0-40-generic");
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000});
  add_proc_modules(r, {"i915"});
  add_dkms_module(r, "6.5.0-35-generic", "535.104.05");  // built for the previous kernel only
  add_secure_boot(r, false);
  const auto c = check_root(r);
  const auto f = c.finding("nvidia-module-not-loaded");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(c.report["host"]["kernel"], "6.8.0-40-generic");
  EXPECT_TRUE(c.report["driver"]["module_files"].empty()) << "none for the running kernel";
  expect_goldens("no-module-for-kernel", c, r);
}

TEST(ScenarioNvml, CrashHangAndExitBecomeFindings) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  const struct {
    const char* mode;
    const char* title;
  } cases[] = {{"segfault", "NVML crashed (in nvmlInit_v2): killed by signal 11"},
               {"abort", "NVML crashed (in nvmlInit_v2): killed by signal 6"},
               {"hang", "NVML hung (in nvmlInit_v2)"},
               {"exit", "NVML gave no answer"}};
  for (const auto& k : cases) {
    const auto start = std::chrono::steady_clock::now();
    const auto c = check_root(r, {"--timeout", "1"}, {{"NVML_SIM_MODE", k.mode}});
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(c.json_run.signal, 0) << k.mode;
    EXPECT_EQ(c.json_run.exit_code, 1) << k.mode;
    const auto f = c.finding("nvml-failed");
    ASSERT_FALSE(f.is_null()) << k.mode << ": " << c.ids();
    EXPECT_TRUE(contains(f["title"], k.title)) << f["title"];
    EXPECT_LT(took, std::chrono::seconds(8)) << k.mode << ": two runs with a 1 s timeout";
    EXPECT_TRUE(c.has("driver-libraries-ok")) << "the rest of the report stays whole";
  }
}

// Ubuntu under WSL2: /dev/dxg and the Windows driver's libraries in /usr/lib/wsl/lib, named to
// the loader by WSL's ld.wsl.conf when ld_conf. False when the device node cannot be made.
bool build_wsl2(FixtureRoot& r, bool ld_conf) {
  add_ubuntu_2204(r, "5.15.153.1-microsoft-standard-WSL2", "DESKTOP-7Q2L");
  if (!r.char_device("/dev/dxg", 10, 124, 0666)) return false;
  if (ld_conf)
    r.file("/etc/ld.so.conf.d/ld.wsl.conf", "# This file was automatically generated by WSL.\n/usr/lib/wsl/lib\n");
  // The driver store holds each as a file of its own, not as links.
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1"})
    r.copy(std::string("/usr/lib/wsl/lib/") + name, cuda_sim_library());
  r.copy("/usr/lib/wsl/lib/libnvidia-ml.so.1", nvml_sim_library());
  return true;
}

TEST(ScenarioWsl, Wsl2WithWindowsDriver) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  ASSERT_TRUE(build_wsl2(r, true));
  const auto c = check_root(r, {}, {{"NVML_SIM_NAME", "NVIDIA GeForce RTX 3080"}, {"NVML_SIM_CC", "8.6"}});
  EXPECT_EQ(c.json_run.exit_code, 0) << c.ids();
  EXPECT_EQ(c.report["host"]["wsl"]["kind"], "wsl2");
  EXPECT_TRUE(c.has("wsl-gpu-device"));
  EXPECT_TRUE(c.has("nvml-ok"));
  EXPECT_FALSE(c.has("no-nvidia-gpu")) << "WSL2 shows no PCI GPU by design";
  expect_goldens("wsl2", c, r);
}

TEST(ScenarioWsl, Wsl2WithoutDxg) {
  FixtureRoot r;
  add_ubuntu_2204(r, "5.15.153.1-microsoft-standard-WSL2", "DESKTOP-7Q2L");
  const auto c = check_root(r);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "wsl-no-gpu-device") << c.ids();
  EXPECT_EQ(c.json_run.exit_code, 1);
  expect_goldens("wsl2-without-dxg", c, r);
}

// Ubuntu under WSL2 with the Windows driver's libraries, and a Linux driver someone installed
// inside it (NVIDIA's 535 packages, its libcuda.so.1 found first by the loader).
TEST(ScenarioWsl, NativeLinuxDriverInstalledInsideWsl2) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  ASSERT_TRUE(build_wsl2(r, true));
  r.copy("/usr/lib/x86_64-linux-gnu/libcuda.so.535.183.01", cuda_sim_library());
  r.link("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.535.183.01");
  r.file("/var/lib/dpkg/status",
         "Package: nvidia-driver-535\nStatus: install ok installed\nArchitecture: amd64\n"
         "Version: 535.183.01-0ubuntu0.22.04.1\n\n"
         "Package: libnvidia-compute-535\nStatus: install ok installed\nArchitecture: amd64\n"
         "Version: 535.183.01-0ubuntu0.22.04.1\n\n"
         "Package: nvidia-container-toolkit\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.17.8-1\n\n");
  const auto c = check_root(r, {"--no-runtime"});
  const auto f = c.finding("wsl-native-driver-installed");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(c.report["verdict"]["break_finding"], "wsl-native-driver-installed") << c.ids();
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "installed package: nvidia-driver-535")) << ev;
  EXPECT_TRUE(contains(ev, "installed package: libnvidia-compute-535")) << ev;
  EXPECT_FALSE(contains(ev, "nvidia-container-toolkit")) << "not a driver package";
  std::vector<std::string> cmds;
  for (const auto& x : f["fix"]["commands"]) cmds.push_back(x);
  EXPECT_EQ(cmds,
            (std::vector<std::string>{"apt-get remove --purge nvidia-driver-535 libnvidia-compute-535", "ldconfig"}))
      << f.dump(1);
  EXPECT_TRUE(contains(f["fix"]["text"], "wsl --shutdown")) << f["fix"]["text"];
}

// A venv with Triton (torch.compile's compiler) under WSL2 whose driver store lacks libcuda.so.
TEST(ScenarioWsl, UnversionedLibcudaMissingIsAWarningNamingTriton) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  ASSERT_TRUE(build_wsl2(r, true));
  std::filesystem::remove(r.host("/usr/lib/wsl/lib/libcuda.so"));
  build_venv(r, "12.4");
  r.file("/home/u/venv/lib/python3.11/site-packages/triton-3.1.0.dist-info/METADATA", "Name: triton\nVersion: 3.1.0\n");
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  const auto f = c.finding("libcuda-unversioned-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "warn");
  EXPECT_EQ(f["title"],
            "No libcuda.so beside /usr/lib/wsl/lib/libcuda.so.1: Triton (and torch.compile, which uses it) "
            "will fail");
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "libcuda.so: not found by the loader")) << ev;
  EXPECT_TRUE(contains(ev, "needs libcuda.so: triton 3.1.0 in /home/u/venv (triton-3.1.0.dist-info)")) << ev;
  std::vector<std::string> cmds;
  for (const auto& x : f["fix"]["commands"]) cmds.push_back(x);
  EXPECT_EQ(cmds, (std::vector<std::string>{
                      "mkdir -p /usr/local/lib/wsl-libcuda",
                      "ln -sf /usr/lib/wsl/lib/libcuda.so.1 /usr/local/lib/wsl-libcuda/libcuda.so",
                      "echo 'export TRITON_LIBCUDA_PATH=/usr/local/lib/wsl-libcuda' >> ~/.bashrc", "source ~/.bashrc"}))
      << "not a link inside the read-only driver store: " << f.dump(1);
}

TEST(ScenarioWsl, DriverStoreWithLibcudaSoNeedsNothing) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  ASSERT_TRUE(build_wsl2(r, true));
  build_venv(r, "12.4");
  r.file("/home/u/venv/lib/python3.11/site-packages/triton-3.1.0.dist-info/METADATA", "Name: triton\nVersion: 3.1.0\n");
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  EXPECT_TRUE(c.has("framework-found")) << c.ids();
  EXPECT_FALSE(c.has("libcuda-unversioned-missing")) << c.ids();
}

// Old bitsandbytes on a native driver laid out without the unversioned link.
TEST(ScenarioLibcuda, OldBitsandbytesNeedsLibcudaSoFromTheLoader) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_h100_server(r, 1);
  ASSERT_TRUE(add_device_nodes(r, 1));
  build_venv(r, "12.4");
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  r.file(site + "/bitsandbytes-0.41.1.dist-info/METADATA", "Name: bitsandbytes\nVersion: 0.41.1\n");
  r.file(site + "/bitsandbytes/cuda_setup/main.py", "CUDA_SHARED_LIB_NAME = 'libcuda.so'\n");
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  const auto f = c.finding("libcuda-unversioned-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "No libcuda.so beside /usr/lib/x86_64-linux-gnu/libcuda.so.1: bitsandbytes will fail");
  EXPECT_TRUE(contains(joined_evidence(f),
                       "needs libcuda.so: bitsandbytes 0.41.1 in /home/u/venv (bitsandbytes/cuda_setup/main.py)"));
  std::vector<std::string> cmds;
  for (const auto& x : f["fix"]["commands"]) cmds.push_back(x);
  ASSERT_EQ(cmds.size(), 2u) << f.dump(1);
  EXPECT_TRUE(cmds[0].ends_with("ln -s libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so")) << cmds[0];
  EXPECT_TRUE(cmds[1].ends_with("ldconfig")) << cmds[1];
  // With the link there, and a new bitsandbytes without the old set-up, nothing is said.
  r.link("/usr/lib/x86_64-linux-gnu/libcuda.so", "libcuda.so.1");
  EXPECT_FALSE(check_root(r, {"--no-runtime"}, k_activated_venv).has("libcuda-unversioned-missing"));
}

// WSL's libcuda.so.1 is there, but ld.wsl.conf is gone: named as off the loader's path.
TEST(ScenarioWsl, WslLibrariesOffTheLoadersPath) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  ASSERT_TRUE(build_wsl2(r, false));
  const auto c = check_root(r, {"--no-runtime"});
  const auto f = c.finding("wsl-libraries-off-loader-path");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(c.report["verdict"]["break_finding"], "wsl-libraries-off-loader-path") << c.ids();
  EXPECT_TRUE(contains(joined_evidence(f), "/usr/lib/wsl/lib/libcuda.so.1: present, not on the loader's path"));
  std::vector<std::string> cmds;
  for (const auto& x : f["fix"]["commands"]) cmds.push_back(x);
  EXPECT_EQ(cmds,
            (std::vector<std::string>{"sh -c 'echo /usr/lib/wsl/lib > /etc/ld.so.conf.d/ld.wsl.conf'", "ldconfig"}));
  const auto missing = c.finding("driver-library-missing");
  ASSERT_FALSE(missing.is_null()) << c.ids();
  EXPECT_EQ(missing["follows_from"], "wsl-libraries-off-loader-path") << "named as off the path, not as missing";
}

TEST(ScenarioDriverVsGpu, Rtx5090LeftUnboundByDriver550) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci_ids(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2b85, .class_code = 0x030000});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "550.54.14");
  const auto c = check_root(r, {"--no-runtime"});
  EXPECT_EQ(c.report["verdict"]["break_finding"], "driver-too-old-for-gpu") << c.ids();
  const auto f = c.finding("driver-too-old-for-gpu");
  EXPECT_TRUE(contains(f["title"], "Driver 550.54.14 is older than GPU 0000:01:00.0")) << f["title"];
  EXPECT_TRUE(contains(f["title"], "needs ≥ 570.26"));
  EXPECT_FALSE(c.has("gpu-not-bound"));
  expect_goldens("rtx5090-driver-550", c, r);
}

TEST(ScenarioDriverVsGpu, TeslaK80OnDriver535) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:04:00.0", .device = 0x102d, .class_code = 0x030200});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  const auto c = check_root(r, {"--no-runtime"});
  const auto f = c.finding("driver-too-new-for-gpu");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["title"], "Kepler: last branch R470"));
  expect_goldens("k80-driver-535", c, r);
}

}  // namespace
}  // namespace cudoctor::testing
