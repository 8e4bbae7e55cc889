// NVIDIA's real 535 user-space driver from Debian non-free (unpacked by
// scripts/install-deps.sh --test): its NVML answers "Driver Not Loaded" on this machine.
#include <gtest/gtest.h>

#include <filesystem>

#include "cudoctor/runtime/nvml_child.hpp"
#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

#define REQUIRE_DEBIAN_535()                                                                                     \
  if (!std::filesystem::exists(debian_535_dir() + "/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1")) \
  GTEST_SKIP() << "Debian's NVIDIA 535 packages are not unpacked: run scripts/install-deps.sh --test"

TEST(RealDebian535, NvmlSaysDriverNotLoaded) {
  REQUIRE_DEBIAN_535();
  const auto lib = debian_535_dir() + "/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.1";
  const bool had_ctl = std::filesystem::exists("/dev/nvidiactl");
  const auto facts = runtime::probe_nvml(lib, std::chrono::seconds(20));
  // Run as root, NVML would mknod /dev/nvidiactl; cudoctor writes nothing to the system.
  if (!had_ctl) {
    EXPECT_FALSE(std::filesystem::exists("/dev/nvidiactl")) << "the NVML child created a device node";
  }
  ASSERT_EQ(facts.outcome.status, snapshot::ChildStatus::ok) << facts.outcome.message;
  EXPECT_EQ(facts.init_code, 9);
  EXPECT_EQ(facts.init_error_name, "NVML_ERROR_DRIVER_NOT_LOADED");
  EXPECT_EQ(facts.init_error_string, "Driver Not Loaded");
}

TEST(RealDebian535, ReportSaysDriverNotLoadedOnAVmWithoutGpu) {
  REQUIRE_DEBIAN_535();
  FixtureRoot r;
  add_kvm_guest_without_gpu(r);
  ASSERT_TRUE(add_debian_535_libraries(r));
  const auto c = check_root(r);
  EXPECT_EQ(c.json_run.exit_code, 1);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "no-nvidia-gpu");
  // Debian's alternatives links, absolute, resolved inside the root.
  const auto& libs = c.report["driver"]["libraries"];
  EXPECT_EQ(libs[0]["real_path"], "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.309.01");
  EXPECT_EQ(libs[0]["version"], "535.309.01");
  EXPECT_EQ(libs[1]["version"], "535.309.01");
  const auto f = c.finding("nvml-error-explained-above");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "NVML: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)");
  EXPECT_EQ(f["severity"], "info") << "it follows from the missing GPU";
  EXPECT_TRUE(contains(c.text_run.out, "NVML: Driver Not Loaded"));
}

TEST(RealDebian535, ModuleNotLoadedWithRealLibraries) {
  REQUIRE_DEBIAN_535();
  FixtureRoot r;
  add_debian_12(r);
  add_cpuinfo(r, false);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000});
  add_proc_modules(r, {"i915"});
  add_secure_boot(r, false);
  ASSERT_TRUE(add_debian_535_libraries(r));
  const auto c = check_root(r);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "nvidia-module-not-loaded") << c.ids();
  const auto f = c.finding("nvml-error-explained-above");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["detail"], "No NVIDIA kernel module is loaded"));
}

}  // namespace
}  // namespace cudoctor::testing
