// Garbage, truncated, unreadable and hostile fact sources: a finding or a clear message,
// never a crash or a hang.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

void expect_whole_report(const Checked& c) {
  EXPECT_EQ(c.json_run.signal, 0);
  EXPECT_TRUE(c.json_run.exit_code == 0 || c.json_run.exit_code == 1) << c.json_run.err;
  EXPECT_TRUE(c.report.contains("verdict"));
  EXPECT_EQ(c.text_run.signal, 0);
}

std::string unreadable_paths(const Checked& c) {
  std::string s;
  for (const auto* id : {"fact-unreadable", "driver-fact-unreadable"})
    for (const auto& f : c.findings(id)) s += joined_evidence(f);
  return s;
}

TEST(ScenarioHostile, GarbageSysfsAttributes) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  const auto dev = std::string("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  r.file(dev + "/vendor", std::string("\xff\xfe\x00garbage", 10));
  r.file(dev + "/current_link_width", "sixteen\n");
  // A second device whose class file is truncated to nothing.
  add_pci(r, {.address = "0000:02:00.0", .device = 0x2330, .class_code = 0x030200});
  r.file("/sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/class", "");
  const auto c = check_root(r);
  expect_whole_report(c);
  const auto paths = unreadable_paths(c);
  EXPECT_TRUE(contains(paths, "/sys/bus/pci/devices/0000:01:00.0/vendor: not a hex number: '\\xff\\xfe\\x00garbage'"))
      << paths;
  EXPECT_TRUE(contains(paths, "current_link_width: not a link width: 'sixteen'")) << paths;
  EXPECT_TRUE(contains(paths, "0000:02:00.0/class: not a hex number: ''")) << paths;
  EXPECT_EQ(c.finding("driver-fact-unreadable")["layer"], "L1");
}

TEST(ScenarioHostile, FifoWhereAFileShouldBeDoesNotHang) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  r.fifo("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor");
  r.fifo("/proc/driver/nvidia/version");
  r.fifo("/proc/modules");
  const auto c = check_root(r);
  expect_whole_report(c);
  EXPECT_TRUE(contains(unreadable_paths(c), "/proc/modules: not a regular file"));
}

TEST(ScenarioHostile, DirectoriesLoopsAndDanglingLinks) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  r.dir("/proc/driver/nvidia/version");                         // a directory where a file should be
  r.link("/sys/bus/pci/devices/0000:03:00.0", "0000:03:00.0");  // a link to itself
  r.link("/sys/bus/pci/devices/0000:04:00.0", "/nonexistent/device");
  r.link("/etc/os-release", "/etc/os-release");
  r.file("/proc/sys/kernel/osrelease", std::string(5000, 'x'));
  const auto c = check_root(r);
  expect_whole_report(c);
  EXPECT_TRUE(contains(unreadable_paths(c), "/proc/driver/nvidia/version: is a directory"));
}

TEST(ScenarioHostile, GarbageDriverVersionAndEfiVariable) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia"});
  r.file("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  \x01\x02  \n");
  r.file("/sys/module/nvidia/version", "not-a-version\n");
  r.file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", "\x06");
  const auto c = check_root(r);
  expect_whole_report(c);
  const auto paths = unreadable_paths(c);
  EXPECT_TRUE(contains(paths, "/proc/driver/nvidia/version: no \"NVRM version:\" line with a version number")) << paths;
  EXPECT_TRUE(contains(paths, "/sys/module/nvidia/version: not a version: 'not-a-version'")) << paths;
  EXPECT_TRUE(contains(paths, "expected 5 bytes (attributes + value), found 1")) << paths;
  EXPECT_TRUE(c.report["host"]["secure_boot"].is_null());
}

TEST(ScenarioHostile, UnreadableFilesForAnUnprivilegedUser) {
  if (!std::filesystem::exists("/usr/bin/setpriv")) GTEST_SKIP() << "needs setpriv (util-linux)";
  if (::getuid() != 0) GTEST_SKIP() << "needs root to switch to an unprivileged user";
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  std::filesystem::permissions(r.host("/proc/driver/nvidia/version"), std::filesystem::perms::owner_read);
  std::filesystem::permissions(r.host("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/class"),
                               std::filesystem::perms::none);
  Checked c;
  c.json_run = run_cudoctor({"--root", r.path().string(), "--runtime", "--json"}, {},
                            {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  c.report = nlohmann::json::parse(c.json_run.out);
  expect_whole_report(c);
  const auto paths = unreadable_paths(c);
  EXPECT_TRUE(contains(paths, "/proc/driver/nvidia/version: Permission denied")) << paths;
  EXPECT_TRUE(contains(paths, "0000:01:00.0/class: Permission denied")) << paths;
  // The module version still comes from sysfs.
  EXPECT_EQ(c.report["driver"]["kernel_module"]["version"], "535.104.05");
}

TEST(ScenarioHostile, RootThatIsNotADirectory) {
  const auto c = run_cudoctor({"--root", "/nonexistent/cudoctor-root"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_TRUE(contains(c.err, "--root /nonexistent/cudoctor-root: not a directory")) << c.err;
}

TEST(ScenarioHostile, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cudoctor({"--format", "yaml"}).exit_code, 2);
  EXPECT_EQ(run_cudoctor({"--no-such-flag"}).exit_code, 2);
  EXPECT_EQ(run_cudoctor({"--timeout", "-3"}).exit_code, 2);
  const auto help = run_cudoctor({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--root"));
}

}  // namespace
}  // namespace cudoctor::testing
