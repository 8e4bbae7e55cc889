#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {

snapshot::HostFacts host_of(const sys::FakeSys& s) {
  Context ctx(s, {});
  return probe_host(ctx);
}

TEST(HostProbe, OsReleaseQuotedAndUnquoted) {
  sys::FakeSys s;
  s.file("/etc/os-release",
         "NAME='Rocky Linux'\nID=rocky\nVERSION_ID=\"9.3\"\nPRETTY_NAME=\"Rocky Linux 9.3 (Blue Onyx)\"\n");
  const auto h = host_of(s);
  EXPECT_EQ(h.os_id, "rocky");
  EXPECT_EQ(h.os_version, "9.3");
  EXPECT_EQ(h.os_pretty_name, "Rocky Linux 9.3 (Blue Onyx)");
}

TEST(HostProbe, OsLikeIsTheIdLikeList) {
  sys::FakeSys s;
  s.file("/etc/os-release", "ID=\"rocky\"\nID_LIKE=\"rhel centos  fedora\"\nVERSION_ID=\"9.3\"\n");
  const auto h = host_of(s);
  EXPECT_EQ(h.os_id, "rocky");
  EXPECT_EQ(h.os_like, (std::vector<std::string>{"rhel", "centos", "fedora"}));
  sys::FakeSys debian;
  debian.file("/etc/os-release", "ID=debian\n");
  EXPECT_TRUE(host_of(debian).os_like.empty());
}

TEST(HostProbe, NvidiaEnvironmentInItsOrderFromOurEnvironment) {
  sys::FakeSys s;
  s.set_env("CUDA_MODULE_LOADING", "LAZY").set_env("NVIDIA_VISIBLE_DEVICES", "all").set_env("PATH", "/usr/bin");
  // Outside a container the first process's environment is not ours to take.
  s.file("/proc/1/environ", std::string("NVIDIA_DRIVER_CAPABILITIES=compute\0", 35));
  const auto h = host_of(s);
  ASSERT_EQ(h.nvidia_env.size(), 2u);
  EXPECT_EQ(h.nvidia_env[0], (snapshot::EnvVar{"NVIDIA_VISIBLE_DEVICES", "all", "environment"}));
  EXPECT_EQ(h.nvidia_env[1], (snapshot::EnvVar{"CUDA_MODULE_LOADING", "LAZY", "environment"}));
  EXPECT_EQ(s.reads().count("/proc/1/environ"), 0u);
}

TEST(HostProbe, NvidiaEnvironmentOfTheContainersFirstProcess) {
  sys::FakeSys s;
  s.file("/.dockerenv", "");
  const std::string environ[] = {
      "PATH=/usr/local/sbin:/usr/bin", "NVIDIA_VISIBLE_DEVICES=GPU-5e2b", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
      "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471", "CUDA_DISABLE_PTX_JIT="};
  std::string text;
  for (const auto& e : environ) text += e + std::string(1, '\0');
  s.file("/proc/1/environ", text);
  s.set_env("NVIDIA_VISIBLE_DEVICES", "0");
  const auto h = host_of(s);
  ASSERT_EQ(h.nvidia_env.size(), 4u);
  EXPECT_EQ(h.nvidia_env[0], (snapshot::EnvVar{"NVIDIA_VISIBLE_DEVICES", "0", "environment"})) << "ours wins";
  EXPECT_EQ(h.nvidia_env[1], (snapshot::EnvVar{"NVIDIA_DRIVER_CAPABILITIES", "compute,utility", "/proc/1/environ"}));
  EXPECT_EQ(h.nvidia_env[2], (snapshot::EnvVar{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=470,driver<471",
                                               "/proc/1/environ"}));
  EXPECT_EQ(h.nvidia_env[3], (snapshot::EnvVar{"CUDA_DISABLE_PTX_JIT", "", "/proc/1/environ"})) << "set, to nothing";
}

TEST(HostProbe, AnUnreadableFirstProcessEnvironmentIsSkipped) {
  sys::FakeSys s;
  s.file("/.dockerenv", "").file("/proc/1/environ", std::string("NVIDIA_VISIBLE_DEVICES=all\0", 27));
  s.fail("/proc/1/environ", "Permission denied");
  Context ctx(s, {});
  const auto h = probe_host(ctx);
  EXPECT_TRUE(h.nvidia_env.empty());
  EXPECT_TRUE(ctx.take_unreadable().empty()) << "another user's first process is not readable on any machine";
}

TEST(HostProbe, ContainerKindsWithEvidence) {
  {
    sys::FakeSys s;
    s.file("/run/.containerenv", "engine=\"podman-4.9.3\"\n");
    EXPECT_EQ(host_of(s).container.kind, "podman");
  }
  {
    sys::FakeSys s;
    s.file("/.dockerenv", "").set_env("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    const auto h = host_of(s);
    EXPECT_EQ(h.container.kind, "kubernetes") << "the orchestrator names it better than the engine";
    EXPECT_EQ(h.container.evidence.size(), 2u);
  }
  {
    sys::FakeSys s;
    s.set_env("APPTAINER_CONTAINER", "/scratch/pytorch.sif");
    EXPECT_EQ(host_of(s).container.kind, "apptainer");
  }
  {
    sys::FakeSys s;
    s.file("/proc/1/cgroup", "12:pids:/lxc.payload.web/init.scope\n");
    EXPECT_EQ(host_of(s).container.kind, "lxc");
  }
  {
    sys::FakeSys s;
    s.file("/proc/1/cgroup", "0::/init.scope\n");
    EXPECT_EQ(host_of(s).container.kind, "");
  }
}

TEST(HostProbe, WslFromKernelRelease) {
  sys::FakeSys s;
  s.file("/proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
  EXPECT_EQ(host_of(s).wsl.kind, "wsl2");
  sys::FakeSys s1;
  s1.file("/proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
  EXPECT_EQ(host_of(s1).wsl.kind, "wsl1");
}

TEST(HostProbe, SecureBootVariable) {
  sys::FakeSys on;
  on.file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
          std::string("\x06\0\0\0\x01", 5));
  EXPECT_EQ(host_of(on).secure_boot, true);
  sys::FakeSys off;
  off.file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", std::string("\x06\0\0\0\0", 5));
  EXPECT_EQ(host_of(off).secure_boot, false);
  sys::FakeSys bios;
  bios.dir("/sys/firmware/acpi");
  EXPECT_EQ(host_of(bios).secure_boot, false);
}

TEST(HostProbe, UnreadableSourcesAreRecorded) {
  sys::FakeSys s;
  s.file("/etc/os-release", "ID=x\n").fail("/etc/os-release", "Permission denied");
  Context ctx(s, {});
  (void)probe_host(ctx);
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].path, "/etc/os-release");
  EXPECT_EQ(u[0].reason, "Permission denied");
}

TEST(DriverProbe, KernelModuleVersionLines) {
  sys::FakeSys s;
  s.file("/proc/driver/nvidia/version",
         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  "
         "(dvs-builder@U16-I3-C03-2-1)  Thu Jan 23 22:50:36 UTC 2025\nGCC version:  gcc version 12.3.0\n");
  Context ctx(s, {});
  const auto km = probe_kernel_module(ctx);
  EXPECT_EQ(km.version, "570.86.15");
  EXPECT_EQ(km.flavor, "open");
}

TEST(DriverProbe, DeviceNodePermissionsForTheUser) {
  sys::FakeSys s;
  s.device("/dev/nvidiactl", 195, 255, 0666).device("/dev/nvidia0", 195, 0, 0660, 0, 44);
  s.set_identity({1000, 1000, {44}, "ana"});
  Context ctx(s, {});
  const auto nodes = probe_device_nodes(ctx);
  ASSERT_EQ(nodes.size(), 3u);  // nvidia0, the missing nvidia-uvm, nvidiactl
  EXPECT_EQ(nodes[0].path, "/dev/nvidia0");
  EXPECT_TRUE(nodes[0].can_write) << "member of the owning group 44";
  EXPECT_EQ(nodes[1].path, "/dev/nvidia-uvm");
  EXPECT_EQ(nodes[1].type, snapshot::NodeType::missing);
  EXPECT_EQ(nodes[2].path, "/dev/nvidiactl");
  sys::FakeSys t;
  t.device("/dev/nvidia0", 195, 0, 0660, 0, 44).set_identity({1000, 1000, {27}, "bob"});
  Context ctx2(t, {});
  EXPECT_FALSE(probe_device_nodes(ctx2)[0].can_read);
}

TEST(ModuleProbe, BlacklistsFromModprobeDAndCmdline) {
  sys::FakeSys s;
  s.file("/proc/modules", "nvidia_uvm 1523712 0 - Live 0xffffffffc1c00000 (POE)\n");
  s.file("/etc/modprobe.d/nv.conf", "# x\nblacklist nvidia-drm\ninstall nvidia /bin/false\noptions nvidia NVreg_X=1\n");
  s.file("/proc/cmdline", "ro quiet modprobe.blacklist=nouveau,snd rd.driver.blacklist=nouveau\n");
  snapshot::DriverFacts d;
  Context ctx(s, {});
  probe_modules(ctx, d);
  EXPECT_TRUE(d.modules_listed);
  EXPECT_TRUE(d.modules[1].loaded);  // nvidia_uvm
  EXPECT_FALSE(d.modules[0].loaded);
  ASSERT_EQ(d.blacklists.size(), 4u);
  EXPECT_EQ(d.blacklists[0].module, "nvidia_drm");
  EXPECT_EQ(d.blacklists[0].source, "/etc/modprobe.d/nv.conf:2");
  EXPECT_EQ(d.blacklists[1].line, "install nvidia /bin/false");
  EXPECT_EQ(d.blacklists[2].source, "/proc/cmdline");
}

TEST(HostProbe, AnUnreadablePasswdIsRecorded) {
  sys::FakeSys s;
  s.file("/etc/passwd", "ana:x:1000:1000::/home/ana:/bin/sh\n").fail("/etc/passwd", "Permission denied");
  Context ctx(s, {});
  const auto h = probe_host(ctx);
  EXPECT_TRUE(h.private_homes.empty());
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/etc/passwd", "Permission denied"}));
}

TEST(DriverProbe, AnUnlistableDevIsRecordedAndTheNodesCheckedByName) {
  sys::FakeSys s;
  s.device("/dev/nvidiactl", 195, 255, 0666).device("/dev/nvidia0", 195, 0, 0666);
  s.fail("/dev", "Permission denied");
  Context ctx(s, {});
  const auto nodes = probe_device_nodes(ctx);
  ASSERT_EQ(nodes.size(), 2u) << "nvidia0 is not seen without the listing";
  EXPECT_EQ(nodes[1].path, "/dev/nvidiactl");
  EXPECT_EQ(nodes[1].type, snapshot::NodeType::char_device);
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/dev", "Permission denied"}));
}

}  // namespace cudoctor::probe

namespace cudoctor::probe {

TEST(PciProbe, AnUnlistableBusIsRecorded) {
  sys::FakeSys s;
  s.dir("/sys/bus/pci/devices").fail("/sys/bus/pci/devices", "Permission denied");
  Context ctx(s, {});
  EXPECT_FALSE(probe_pci(ctx).listed);
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/sys/bus/pci/devices", "Permission denied"}));
}

}  // namespace cudoctor::probe
