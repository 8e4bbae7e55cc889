// L1 fixes checked against the machine they are printed for: each scenario builds a machine
// in the files it really has (os-release, /usr/bin tools, dpkg's status, /proc/1/environ,
// links) and asserts the exact commands of the fix, that each parses as bash, and that what
// only looks is a check. A fix never names sudo for root, a tool that is absent, another
// distribution's command, or a host command inside a container.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/view/machine.hpp"
#include "machines.hpp"
#include "scenario.hpp"
#include "snapshots.hpp"

namespace cudoctor::testing {
namespace {

using json = nlohmann::json;

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  if (a.is_array())
    for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}
std::vector<std::string> commands(const json& f) {
  return strings(f["fix"]["commands"]);
}
std::vector<std::string> checks(const json& f) {
  return strings(f["fix"]["checks"]);
}

// Every command and check of every finding parses as bash.
void expect_all_parse(const json& report) {
  if (!std::filesystem::exists("/bin/bash") && !std::filesystem::exists("/usr/bin/bash")) return;
  for (const auto& f : report["findings"])
    for (const auto* key : {"commands", "checks"})
      for (const auto& c : strings(f["fix"][key])) EXPECT_TRUE(bash_parses(c)) << f["id"] << ": " << c;
}

// Every command (not check) of every finding, one per line, for "no X anywhere" assertions.
std::string all_commands(const json& report) {
  std::string s;
  for (const auto& f : report["findings"])
    for (const auto& c : commands(f)) s += c + "\n";
  return s;
}

// Runs `cudoctor --json` as an ordinary user: as it is when the tests are not root, else as
// nobody through setpriv. nullopt when the tests are root and setpriv is missing.
std::optional<Checked> check_as_user(const FixtureRoot& r, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> prefix;
  if (::geteuid() == 0) {
    if (!std::filesystem::exists("/usr/bin/setpriv")) return std::nullopt;
    prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  refresh_ld_cache(r);
  Checked c;
  c.json_run = run_cudoctor({"--root", r.path().string(), "--runtime", "--json"}, env, prefix);
  try {
    c.report = json::parse(c.json_run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << c.json_run.err;
  }
  return c;
}

#define CHECK_AS_USER(c, ...)                                                      \
  const auto c##_run = check_as_user(__VA_ARGS__);                                 \
  if (!c##_run) GTEST_SKIP() << "runs as root and needs setpriv to become a user"; \
  const auto& c = *c##_run

// Nodes the NVIDIA Container Toolkit or the driver makes, as plain files: what the rules read
// of them is their presence and mode, which a file has without mknod.
void add_node_files(FixtureRoot& r, bool uvm) {
  r.file("/dev/nvidiactl", "", 0666);
  r.file("/dev/nvidia0", "", 0666);
  if (uvm) r.file("/dev/nvidia-uvm", "", 0666);
}

void add_nvml(FixtureRoot& r, const std::string& version) {
  r.copy("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so." + version, nvml_sim_library());
  r.link("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so." + version);
}

// A docker container on an H100 host whose image asks for the utility capability only: the
// toolkit mounted the control and GPU nodes, NVML and nvidia-smi, but no libcuda.so.1 and
// no /dev/nvidia-uvm.
void build_docker_utility_only(FixtureRoot& r) {
  build_docker_on_h100_host(r);
  add_node_files(r, false);
  add_nvml(r, "535.104.05");
  r.file("/usr/bin/nvidia-smi", "", 0755);
}

TEST(ScenarioFixesL1, ContainerWithUtilityOnlyBreaksAtItsCapabilities) {
  FixtureRoot r;
  build_docker_utility_only(r);
  const auto c = check_root(r, {}, {{"NVIDIA_DRIVER_CAPABILITIES", "utility"}});
  EXPECT_EQ(c.report["verdict"]["break_finding"], "container-capability-missing") << c.ids();
  const auto f = c.finding("container-capability-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["layer"], "L1");
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["title"],
            "The container asks for the driver capabilities \"utility\", without compute: no libcuda.so.1 "
            "is mounted");
  EXPECT_TRUE(contains(joined_evidence(f), "NVIDIA_DRIVER_CAPABILITIES=utility (environment)\n")) << joined_evidence(f);
  EXPECT_TRUE(contains(f["detail"], "though nvidia-smi works"));
  EXPECT_TRUE(commands(f).empty()) << "nothing inside the container changes its capabilities";
  EXPECT_TRUE(contains(f["fix"]["text"], "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility <image>"))
      << f["fix"]["text"];
  EXPECT_EQ(checks(f), std::vector<std::string>{"printenv NVIDIA_DRIVER_CAPABILITIES"});
  // What it explains follows from it, and says what to do on the host, not here.
  for (const auto* id : {"uvm-module-not-loaded", "driver-library-missing"}) {
    const auto g = c.finding(id);
    ASSERT_FALSE(g.is_null()) << id << " " << c.ids();
    EXPECT_EQ(g["follows_from"], "container-capability-missing") << id;
    EXPECT_TRUE(commands(g).empty()) << id;
  }
  EXPECT_TRUE(contains(c.finding("uvm-module-not-loaded")["fix"]["text"], "The host has nvidia-uvm loaded"));
  EXPECT_EQ(c.finding("driver-library-missing")["title"], "libcuda.so.1 is not mounted into the container");
  const auto cmds = all_commands(c.report);
  EXPECT_FALSE(contains(cmds, "modprobe")) << cmds;
  EXPECT_FALSE(contains(cmds, "mknod")) << cmds;
  EXPECT_FALSE(contains(cmds, "apt-get")) << cmds;
  expect_all_parse(c.report);
  EXPECT_TRUE(contains(c.text_run.out, "check: $ printenv NVIDIA_DRIVER_CAPABILITIES"));
}

TEST(ScenarioFixesL1, ContainerCapabilitiesFromItsFirstProcess) {
  FixtureRoot r;
  build_docker_utility_only(r);
  const std::string environ = std::string("PATH=/usr/bin:/bin") + '\0' + "NVIDIA_VISIBLE_DEVICES=all" + '\0' +
                              "NVIDIA_DRIVER_CAPABILITIES=graphics,utility" + '\0';
  r.file("/proc/1/environ", environ, 0644);
  const auto c = check_root(r);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "container-capability-missing") << c.ids();
  const auto f = c.finding("container-capability-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(joined_evidence(f), "NVIDIA_DRIVER_CAPABILITIES=graphics,utility (/proc/1/environ)\n"))
      << joined_evidence(f);
  EXPECT_TRUE(contains(f["fix"]["text"], "NVIDIA_DRIVER_CAPABILITIES=compute,graphics,utility")) << f["fix"]["text"];
  EXPECT_EQ(checks(f), std::vector<std::string>{"tr '\\0' '\\n' < /proc/1/environ | grep NVIDIA_DRIVER_CAPABILITIES"});
  expect_all_parse(c.report);
}

TEST(ScenarioFixesL1, ComputeOrAllOrTheDefaultIsNoFinding) {
  for (const std::string value : {"compute,utility", "all", " utility , compute", ""}) {
    FixtureRoot r;
    build_docker_utility_only(r);
    const auto c = check_root(r, {}, {{"NVIDIA_DRIVER_CAPABILITIES", value}});
    EXPECT_FALSE(c.has("container-capability-missing")) << "'" << value << "': " << c.ids();
  }
}

// A CUDA 12.4.1 image (its NVIDIA_REQUIRE_CUDA, first alternatives as NVIDIA's images set it,
// on the container's first process) on a host whose R535 driver supports CUDA 12.2: the toolkit
// would refuse it; started with NVIDIA_DISABLE_REQUIRE=true, it runs, and CUDA in it cannot.
TEST(ScenarioFixesL1, ContainerImageRequirementUnmetNamesTheHostDriver) {
  FixtureRoot r;
  build_docker_utility_only(r);
  const std::string require =
      "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 "
      "brand=tesla,driver>=525,driver<526 brand=geforce,driver>=525,driver<526";
  r.file("/proc/1/environ",
         std::string("PATH=/usr/bin:/bin") + '\0' + "NVIDIA_REQUIRE_CUDA=" + require + '\0' +
             "NVIDIA_DISABLE_REQUIRE=true" + '\0' + "NVIDIA_DRIVER_CAPABILITIES=compute,utility" + '\0',
         0644);
  const auto c = check_root(r);
  const auto f = c.finding("container-requirement-unmet");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["title"],
            "The image requires cuda>=12.4 (NVIDIA_REQUIRE_CUDA); the host's driver 535.104.05 (CUDA 12.2) does not "
            "meet it");
  EXPECT_TRUE(contains(f["detail"], "NVIDIA_DISABLE_REQUIRE=true turned that check off")) << f["detail"];
  EXPECT_TRUE(contains(joined_evidence(f), "NVIDIA_REQUIRE_CUDA=" + require + " (/proc/1/environ)"))
      << joined_evidence(f);
  EXPECT_EQ(f["fix"]["text"],
            "On the host: upgrade the driver to ≥ 550.54.14 (CUDA 12.4); or use an image built for the CUDA the "
            "host's driver supports (≤ 12.2).");
  EXPECT_TRUE(commands(f).empty()) << "nothing inside the container changes the host's driver";
  EXPECT_EQ(checks(f), std::vector<std::string>{"tr '\\0' '\\n' < /proc/1/environ | grep NVIDIA_REQUIRE_CUDA"});
  expect_all_parse(c.report);
  // The same image on an R525 host holds only through the forward-compatibility alternatives.
  FixtureRoot old;
  build_docker_utility_only(old);
  add_nvidia_kernel_version(old, "525.147.05");
  old.file("/proc/1/environ", "NVIDIA_REQUIRE_CUDA=" + require + '\0', 0644);
  const auto o = check_root(old);
  EXPECT_FALSE(o.has("container-requirement-unmet")) << o.ids();
  const auto b = o.finding("container-requirement-by-brand");
  ASSERT_FALSE(b.is_null()) << o.ids();
  EXPECT_EQ(b["title"],
            "The image's NVIDIA_REQUIRE_CUDA holds on the host's driver 525.147.05 (CUDA 12.0) only through "
            "\"brand=tesla,driver>=525,driver<526\"");
  EXPECT_TRUE(contains(b["detail"], "error 804")) << b["detail"];
}

// CUDA_VISIBLE_DEVICES=-1 left in ~/.bashrc: with --no-runtime the report names it, with the
// file and line, and the fix takes that line out and unsets it.
TEST(ScenarioFixesL1, CudaVisibleDevicesFromBashrcIsNamedWithItsLine) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  add_debian_12(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2204, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
  ASSERT_TRUE(add_device_nodes(r, 1));
  r.file("/home/u/.bashrc", "# ~/.bashrc\nalias ll='ls -l'\nexport CUDA_VISIBLE_DEVICES=-1\n");
  const auto c = check_root(r, {"--no-runtime"}, {{"HOME", "/home/u"}, {"CUDA_VISIBLE_DEVICES", "-1"}});
  const auto f = c.finding("cuda-visible-devices-hides-gpus");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "CUDA_VISIBLE_DEVICES=\"-1\" hides every GPU");
  EXPECT_TRUE(contains(joined_evidence(f), "/home/u/.bashrc:3: export CUDA_VISIBLE_DEVICES=-1")) << joined_evidence(f);
  EXPECT_TRUE(contains(f["fix"]["text"], "It is set in /home/u/.bashrc (line 3)")) << f["fix"]["text"];
  EXPECT_EQ(commands(f), (std::vector<std::string>{"sed -i '3{/CUDA_VISIBLE_DEVICES/d}' /home/u/.bashrc",
                                                   "unset CUDA_VISIBLE_DEVICES"}));
  expect_all_parse(c.report);
  // An index past the only GPU cuts the list short.
  const auto cut = check_root(r, {"--no-runtime"}, {{"HOME", "/home/u"}, {"CUDA_VISIBLE_DEVICES", "0,1"}});
  const auto s = cut.finding("cuda-visible-devices-cut-short");
  ASSERT_FALSE(s.is_null()) << cut.ids();
  EXPECT_EQ(s["title"], "CUDA_VISIBLE_DEVICES=\"0,1\" stops at \"1\": CUDA sees only the 1 GPU before it");
  EXPECT_TRUE(contains(s["detail"], "no GPU 1 (1 GPU)")) << s["detail"];
}

TEST(ScenarioFixesL1, ContainerWithoutGpusNamesTheHostCommandsInItsText) {
  FixtureRoot r;
  add_ubuntu_2204(r, "5.15.0-105-generic", "3f2a9c1b7d4e");
  r.file("/.dockerenv", "");
  add_pci(r, {.address = "0000:1b:00.0", .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  r.dir("/dev");
  const auto c = check_root(r, {}, {{"NVIDIA_DRIVER_CAPABILITIES", "utility"}});
  EXPECT_EQ(c.report["verdict"]["break_finding"], "container-no-gpu-access") << "no devices at all comes first";
  const auto f = c.finding("container-no-gpu-access");
  EXPECT_TRUE(commands(f).empty());
  EXPECT_TRUE(contains(f["fix"]["text"], "on the host, docker run --gpus all <image>")) << f["fix"]["text"];
  EXPECT_TRUE(c.has("container-capability-missing")) << c.ids();
  expect_all_parse(c.report);
}

// A Fedora workstation with an RTX 4090 that nouveau took.
void build_fedora_nouveau(FixtureRoot& r) {
  add_ubuntu_2204(r, "6.8.5-301.fc40.x86_64", "fedora-box");
  r.file("/etc/os-release",
         "NAME=\"Fedora Linux\"\nVERSION=\"40 (Workstation Edition)\"\nID=fedora\nVERSION_ID=40\n"
         "PRETTY_NAME=\"Fedora Linux 40 (Workstation Edition)\"\nCPE_NAME=\"cpe:/o:fedoraproject:fedora:40\"\n");
  add_cpuinfo(r, false);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nouveau"});
  add_proc_modules(r, {"nouveau"});
  for (const auto* tool : {"dnf", "rpm", "dracut", "modprobe"}) r.file(std::string("/usr/bin/") + tool, "", 0755);
}

const char* k_nouveau_blacklist = "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | ";

TEST(ScenarioFixesL1, FedoraNouveauGetsDracutAndAkmodNvidia) {
  FixtureRoot r;
  build_fedora_nouveau(r);
  r.file("/usr/bin/sudo", "", 04755);
  CHECK_AS_USER(c, r);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "nouveau-bound");
  const auto f = c.finding("nouveau-bound");
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["title"], "nouveau holds GPU 0000:01:00.0 [10de:2684]");
  EXPECT_EQ(commands(f), (std::vector<std::string>{
                             std::string(k_nouveau_blacklist) + "sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
                             "sudo dracut --force", "sudo dnf install akmod-nvidia", "sudo reboot"}));
  EXPECT_TRUE(contains(f["fix"]["text"], "RPM Fusion, which must be enabled")) << f["fix"]["text"];
  const auto cmds = all_commands(c.report);
  EXPECT_FALSE(contains(cmds, "update-initramfs")) << cmds;
  EXPECT_FALSE(contains(cmds, "apt")) << cmds;
  EXPECT_FALSE(contains(cmds, "#")) << "no inline alternatives: " << cmds;
  expect_all_parse(c.report);
}

TEST(ScenarioFixesL1, WithoutSudoTheFixGoesThroughSu) {
  FixtureRoot r;
  build_fedora_nouveau(r);
  CHECK_AS_USER(c, r);
  const auto f = c.finding("nouveau-bound");
  // su reads its password from standard input, so the pipe runs inside it.
  EXPECT_EQ(commands(f),
            (std::vector<std::string>{"su -c 'printf '\\''blacklist nouveau\\noptions nouveau modeset=0\\n'\\'' > "
                                      "/etc/modprobe.d/blacklist-nouveau.conf'",
                                      "su -c 'dracut --force'", "su -c 'dnf install akmod-nvidia'", "su -c reboot"}));
  expect_all_parse(c.report);
}

TEST(ScenarioFixesL1, RootGetsNoSudo) {
  if (::geteuid() != 0) GTEST_SKIP() << "the fixture's identity is this process's: needs root (FixesL1Unit covers it)";
  FixtureRoot r;
  build_fedora_nouveau(r);
  r.file("/usr/bin/sudo", "", 04755);
  const auto c = check_root(r);
  EXPECT_EQ(commands(c.finding("nouveau-bound")),
            (std::vector<std::string>{std::string(k_nouveau_blacklist) + "tee /etc/modprobe.d/blacklist-nouveau.conf",
                                      "dracut --force", "dnf install akmod-nvidia", "reboot"}));
  EXPECT_FALSE(contains(all_commands(c.report), "sudo")) << all_commands(c.report);
  expect_all_parse(c.report);
}

// A Debian 12 server with the 535 module loaded whose libcuda.so.1 link points at a file
// that is gone, while dpkg still lists libcuda1.
void build_debian_dangling_libcuda(FixtureRoot& r) {
  add_debian_12(r);
  add_cpuinfo(r, false);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "535.183.01");
  add_node_files(r, true);
  add_nvml(r, "535.183.01");
  r.link("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.535.183.01");
  r.file("/var/lib/dpkg/status",
         "Package: libcuda1\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\n"
         "Version: 535.183.01-1~deb12u1\nDescription: NVIDIA CUDA Driver Library\n\n"
         "Package: nvidia-kernel-dkms\nStatus: install ok installed\nArchitecture: amd64\n"
         "Version: 535.183.01-1~deb12u1\n\n");
  r.file("/usr/bin/sudo", "", 04755);
}

TEST(ScenarioFixesL1, DebianDanglingLibcudaIsReinstalled) {
  FixtureRoot r;
  build_debian_dangling_libcuda(r);
  CHECK_AS_USER(c, r);
  const auto f = c.finding("driver-library-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"],
            "libcuda.so.1 is installed but its link dangles: /usr/lib/x86_64-linux-gnu/libcuda.so.1 -> "
            "libcuda.so.535.183.01");
  EXPECT_TRUE(contains(joined_evidence(f),
                       "/usr/lib/x86_64-linux-gnu/libcuda.so.1: a link to libcuda.so.535.183.01, which does not exist"))
      << joined_evidence(f);
  EXPECT_EQ(commands(f), (std::vector<std::string>{"sudo apt-get install --reinstall libcuda1", "sudo ldconfig"}));
  EXPECT_EQ(c.report["verdict"]["break_finding"], "driver-library-missing");
  expect_all_parse(c.report);
}

TEST(ScenarioFixesL1, LibcudaOffTheLoadersPathIsAddedToIt) {
  FixtureRoot r;
  build_debian_dangling_libcuda(r);
  std::filesystem::remove(r.host("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  r.copy("/usr/local/nvidia/lib64/libcuda.so.1", cuda_sim_library());
  CHECK_AS_USER(c, r);
  const auto f = c.finding("driver-library-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"],
            "libcuda.so.1 is installed at /usr/local/nvidia/lib64/libcuda.so.1 but not on the loader's path");
  EXPECT_EQ(commands(f),
            (std::vector<std::string>{"echo /usr/local/nvidia/lib64 | sudo tee /etc/ld.so.conf.d/nvidia.conf",
                                      "sudo ldconfig"}));
  expect_all_parse(c.report);
}

TEST(ScenarioFixesL1, LibcudaNotInstalledIsInstalled) {
  FixtureRoot r;
  build_debian_dangling_libcuda(r);
  std::filesystem::remove(r.host("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  r.file("/var/lib/dpkg/status",
         "Package: nvidia-kernel-dkms\nStatus: install ok installed\nVersion: 535.183.01-1\n\n");
  CHECK_AS_USER(c, r);
  const auto f = c.finding("driver-library-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "The user-space driver (libcuda.so.1) is not installed");
  EXPECT_EQ(commands(f), std::vector<std::string>{"sudo apt-get install libcuda1"});
  expect_all_parse(c.report);
}

TEST(ScenarioFixesL1, UvmWithoutNvidiaModprobeIsMadeWithMknod) {
  FixtureRoot r;
  build_debian_dangling_libcuda(r);
  add_driver_libraries(r, "535.183.01", nvml_sim_library());
  add_proc_modules(r, {"nvidia_drm", "nvidia_modeset", "nvidia"});
  std::filesystem::remove(r.host("/dev/nvidia-uvm"));
  {
    CHECK_AS_USER(c, r);
    const auto f = c.finding("uvm-module-not-loaded");
    ASSERT_FALSE(f.is_null()) << c.ids();
    EXPECT_EQ(commands(f),
              (std::vector<std::string>{
                  "sudo modprobe nvidia-uvm",
                  "sudo mknod -m 666 /dev/nvidia-uvm c $(grep nvidia-uvm /proc/devices | cut -d' ' -f1) 0"}));
    expect_all_parse(c.report);
  }
  r.file("/usr/bin/nvidia-modprobe", "", 0755);
  CHECK_AS_USER(c, r);
  EXPECT_EQ(commands(c.finding("uvm-module-not-loaded")),
            (std::vector<std::string>{"sudo modprobe nvidia-uvm", "sudo nvidia-modprobe -u -c=0"}));
}

TEST(ScenarioFixesL1, NoLspciListsTheBusThroughSysfsAsACheck) {
  FixtureRoot r;
  add_kvm_guest_without_gpu(r, "ci-runner-3");
  {
    const auto c = check_root(r);
    const auto f = c.finding("no-nvidia-gpu");
    ASSERT_FALSE(f.is_null()) << c.ids();
    EXPECT_TRUE(commands(f).empty()) << "listing the bus changes nothing";
    EXPECT_EQ(checks(f), std::vector<std::string>{"grep -l 0x10de /sys/bus/pci/devices/*/vendor"});
    expect_all_parse(c.report);
  }
  r.file("/usr/bin/lspci", "", 0755);
  const auto c = check_root(r);
  EXPECT_EQ(checks(c.finding("no-nvidia-gpu")), std::vector<std::string>{"lspci -nn -d 10de:"});
}

// The rules on a snapshot, for the identities a fixture cannot take.
snapshot::Snapshot nouveau_snapshot(std::uint32_t uid, std::vector<snapshot::Tool> tools) {
  snapshot::Snapshot s;
  s.host.os_id = "fedora";
  s.host.uid = uid;
  s.host.tools = std::move(tools);
  s.driver.pci_listed = true;
  s.driver.modules_listed = true;
  s.driver.modules = {{"nouveau", true, "Live"}, {"nvidia", false, ""}};
  snapshot::Gpu g;
  g.pci.address = "0000:01:00.0";
  g.pci.vendor_id = 0x10de;
  g.pci.device_id = 0x2684;
  g.pci.class_code = 0x030000;
  g.pci.driver = "nouveau";
  s.gpus.push_back(g);
  return s;
}

std::vector<std::string> nouveau_commands(const snapshot::Snapshot& s) {
  const auto& kb = kb::builtin();
  const auto fs = rules::driver_rules(view::derive(s, kb), kb);
  const auto* f = find_finding(fs, "nouveau-bound");
  return f ? f->fix.commands : std::vector<std::string>{};
}

TEST(FixesL1Unit, RootRunsTheCommandsAsTheyAre) {
  const auto cmds = nouveau_commands(nouveau_snapshot(0, {{"sudo", "/usr/bin/sudo"}}));
  EXPECT_EQ(cmds,
            (std::vector<std::string>{std::string(k_nouveau_blacklist) + "tee /etc/modprobe.d/blacklist-nouveau.conf",
                                      "dracut --force", "dnf install akmod-nvidia", "reboot"}));
  for (const auto& c : cmds) EXPECT_FALSE(contains(c, "sudo")) << c;
}

TEST(FixesL1Unit, UserWithSudo) {
  const auto cmds = nouveau_commands(nouveau_snapshot(1000, {{"sudo", "/usr/bin/sudo"}}));
  ASSERT_EQ(cmds.size(), 4u);
  EXPECT_EQ(cmds[1], "sudo dracut --force");
  EXPECT_EQ(cmds[2], "sudo dnf install akmod-nvidia");
}

TEST(FixesL1Unit, ContainerGetsNoHostCommands) {
  auto s = nouveau_snapshot(0, {});
  s.host.container.kind = "docker";
  const auto& kb = kb::builtin();
  const auto fs = rules::driver_rules(view::derive(s, kb), kb);
  const auto* f = find_finding(fs, "nouveau-bound");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->fix.commands.empty());
  EXPECT_TRUE(f->fix.text.starts_with("On the host: ")) << f->fix.text;
}

}  // namespace
}  // namespace cudoctor::testing
