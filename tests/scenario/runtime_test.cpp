// L4 and L5 on fixture roots: the real NVIDIA 535 driver from Debian, the real CUDA 13.0
// runtime and stub from the toolkit here, and a simulated driver for what cannot be had here.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

// A server whose H100 is bound to nvidia 535 (as the Debian packages' driver would be).
void build_server(FixtureRoot& r, const std::string& version) {
  add_debian_12(r, "6.1.0-18-amd64", "gpu-node");
  add_pci(r, {.address = "0000:1b:00.0", .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, version);
  r.file("/usr/bin/nvidia-modprobe", "", 04755);
}

#define REQUIRE(cond, why) \
  if (!(cond)) GTEST_SKIP() << why

TEST(RealRuntime, Cuda13RuntimeOnDriver535IsTooNew) {
  FixtureRoot r;
  build_server(r, "535.309.01");
  REQUIRE(add_debian_535_libraries(r),
          "Debian's NVIDIA 535 packages are not unpacked (scripts/install-deps.sh --test)");
  REQUIRE(add_cuda13_toolkit_runtime(r), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0");
  const auto c = check_root(r);
  // The driver API: the real 535 libcuda says CUDA 12.2 and, with no GPU here, no device.
  EXPECT_EQ(c.report["runtime"]["driver_api"]["driver_version"], 12020);
  EXPECT_EQ(c.report["runtime"]["driver_api"]["init"]["code"], 100);
  EXPECT_TRUE(c.has("cuda-no-device")) << c.ids();
  // CUDA 13.0's runtime on it: error 35, named as a driver too old, with both versions.
  const auto f = c.finding("runtime-too-new-for-driver");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(
      f["title"],
      "CUDA runtime 13.0 (toolkit /usr/local/cuda-13.0) is newer than the driver, which supports CUDA 12.2: error 35");
  EXPECT_TRUE(contains(f["fix"]["text"], "Upgrade the driver to ≥ 580.65.06"));
  EXPECT_TRUE(contains(joined_evidence(f), "cudaDriverGetVersion = 12020 (12.2)"));
  EXPECT_FALSE(c.has("runtime-without-driver"));
}

TEST(RealRuntime, StubLibcudaGivesError34) {
  FixtureRoot r;
  build_server(r, "535.309.01");
  REQUIRE(add_cuda13_toolkit_runtime(r), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0");
  // The classic mistake: the stubs directory on the loader path, with a libcuda.so.1 name.
  r.link("/usr/local/cuda-13.0/lib/stubs/libcuda.so.1", "libcuda.so");
  const auto c = check_root(r, {}, {{"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib/stubs"}});
  EXPECT_EQ(c.report["runtime"]["driver_api"]["init"]["code"], 34);
  const auto stubs = c.findings("cuda-stub-driver");
  ASSERT_EQ(stubs.size(), 2u) << c.ids();
  EXPECT_TRUE(contains(stubs[0]["title"], "/usr/local/cuda-13.0/lib/stubs/libcuda.so"));
  EXPECT_TRUE(contains(joined_evidence(stubs[0]), "cuInit(0) = 34 CUDA_ERROR_STUB_LIBRARY"));
  EXPECT_TRUE(contains(stubs[1]["title"], "loaded the toolkit's stub libcuda: error 34"));
  // The cause sits lower: the stubs directory on LD_LIBRARY_PATH (L2), which L4 shows failing.
  EXPECT_EQ(c.report["verdict"]["break_finding"], "stubs-on-loader-path");
}

TEST(RealRuntime, NoDriverAtAllIsError35ForAnotherReason) {
  FixtureRoot r;
  add_debian_12(r);
  add_cpuinfo(r, true);
  add_qemu_dmi(r);
  REQUIRE(add_cuda13_toolkit_runtime(r), "no CUDA 13.0 toolkit at /usr/local/cuda-13.0");
  const auto c = check_root(r);
  const auto f = c.finding("runtime-without-driver");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["title"], "CUDA runtime 13.0 (toolkit /usr/local/cuda-13.0) finds no CUDA driver: error 35"));
  EXPECT_TRUE(contains(f["detail"], "does not mean a driver that is too old"));
  EXPECT_FALSE(c.has("runtime-too-new-for-driver"));
  EXPECT_EQ(c.report["verdict"]["break_layer"], "L1") << "the missing GPU is the cause";
  // The report, not the rule, says it follows from the break, in every format; its own fix
  // (install a driver) is L1's, so it defers to it instead of repeating or contradicting it.
  EXPECT_EQ(c.report["verdict"]["break_finding"], "nvidia-module-not-loaded");
  EXPECT_EQ(f["follows_from"], "nvidia-module-not-loaded");
  EXPECT_EQ(f["fix"]["text"], "Fix L1 first: The nvidia kernel module is not loaded.");
  EXPECT_TRUE(f["fix"]["commands"].empty());
  EXPECT_TRUE(c.finding("nvidia-module-not-loaded")["follows_from"].is_null()) << "the cause follows from nothing";
  EXPECT_TRUE(contains(c.text_run.out, "from the L1 break)\n")) << c.text_run.out;  // the title wraps before "from"
  const auto md = run_cudoctor({"--root", r.path().string(), "--runtime", "--format", "markdown"});
  EXPECT_TRUE(contains(md.out, "↳ follows from `nvidia-module-not-loaded`")) << md.out;
  EXPECT_TRUE(contains(md.out, "_Follows from `nvidia-module-not-loaded`._")) << md.out;
}

void build_sim_server(FixtureRoot& r) {
  build_server(r, "535.104.05");
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
  ASSERT_TRUE(add_device_nodes(r, 1));
}

TEST(ScenarioRuntime, DriverThatCrashesHangsOrExitsInCuInit) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  build_sim_server(r);
  for (const char* mode : {"segfault", "hang", "exit"}) {
    const auto start = std::chrono::steady_clock::now();
    const auto c = check_root(r, {"--timeout", "1"}, {{"CUDA_SIM_MODE", mode}});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8)) << mode;
    EXPECT_EQ(c.json_run.signal, 0) << mode;
    EXPECT_EQ(c.json_run.exit_code, 1) << mode;
    const auto f = c.finding("cuda-driver-failed");
    ASSERT_FALSE(f.is_null()) << mode << ": " << c.ids();
    EXPECT_TRUE(contains(f["title"], std::string(mode) == "segfault" ? "cuInit crashed: killed by signal 11"
                                     : std::string(mode) == "hang"   ? "cuInit hung"
                                                                     : "cuInit gave no answer"))
        << f["title"];
    EXPECT_TRUE(c.has("nvml-ok")) << mode << ": the rest of the report stays whole: " << c.ids();
  }
}

TEST(ScenarioRuntime, InitErrorsByCause) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  build_sim_server(r);
  {
    const auto c = check_root(r, {}, {{"CUDA_SIM_MODE", "no_device"}, {"CUDA_VISIBLE_DEVICES", ""}});
    EXPECT_EQ(c.finding("cuda-no-device")["title"], "CUDA_VISIBLE_DEVICES=\"\" hides every GPU") << c.ids();
  }
  {
    const auto c = check_root(r, {}, {{"CUDA_SIM_MODE", "no_device"}, {"CUDA_VISIBLE_DEVICES", "GPU-0000dead"}});
    EXPECT_TRUE(contains(c.finding("cuda-no-device")["title"], "names none of this machine's GPUs"));
  }
  {
    // 999 with nvidia-uvm gone, as after a suspend and resume.
    add_proc_modules(r, {"nvidia"});
    std::filesystem::remove(r.host("/dev/nvidia-uvm"));
    const auto c = check_root(r, {}, {{"CUDA_SIM_MODE", "unknown_error"}});
    const auto f = c.finding("cuda-init-unknown-error");
    ASSERT_FALSE(f.is_null()) << c.ids();
    EXPECT_TRUE(contains(f["detail"], "nvidia-uvm is not loaded"));
  }
  {
    const auto c = check_root(r, {}, {{"CUDA_SIM_MODE", "compat_unsupported"}});
    EXPECT_TRUE(c.has("cuda-forward-compat-unsupported")) << c.ids();
  }
}

TEST(ScenarioRuntime, HealthyDriverApi) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  build_sim_server(r);
  const auto c = check_root(r);
  EXPECT_EQ(c.finding("cuda-driver-ok")["title"], "CUDA driver API 12.2: 1 device, NVIDIA H100 80GB HBM3 (cc 9.0)");
  EXPECT_EQ(c.report["runtime"]["driver_api"]["devices"][0]["pci_bus_id"], "0000:1b:00.0");
  EXPECT_EQ(c.finding("compute-not-run")["severity"], "info");
  EXPECT_EQ(c.json_run.exit_code, 0) << c.ids();
  const auto skipped = check_root(r, {"--no-runtime"});
  EXPECT_TRUE(skipped.report["runtime"]["ran"] == false);
  EXPECT_FALSE(skipped.has("cuda-driver-ok"));
}

TEST(RealRuntime, AFrameworksOwnRuntimeIsCheckedToo) {
  FixtureRoot r;
  build_server(r, "535.309.01");
  if (!add_debian_535_libraries(r) || !std::filesystem::exists("/usr/local/cuda-13.0/lib/libcudart.so.13"))
    GTEST_SKIP() << "needs Debian's 535 driver and CUDA 13.0's runtime";
  // A venv whose torch brings CUDA 13.0's runtime in the nvidia/cu13 wheel layout.
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  r.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.2\n");
  r.file(site + "/torch/version.py", "__version__ = '2.9.1+cu130'\ncuda: Optional[str] = '13.0'\nhip = None\n");
  r.copy(site + "/nvidia/cu13/lib/libcudart.so.13", "/usr/local/cuda-13.0/lib/libcudart.so.13");
  const auto lib = r.host(site + "/torch/lib/libtorch_cuda.so").string();
  std::filesystem::create_directories(r.host(site + "/torch/lib"));
  std::ofstream(r.host("/t.c")) << "int t(void) { return 0; }\n";
  ASSERT_EQ(std::system(("cc -shared -fPIC -o '" + lib + "' '" + r.host("/t.c").string() + "' -Wl,--no-as-needed '" +
                         r.host(site + "/nvidia/cu13/lib/libcudart.so.13").string() +
                         "' -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cu13/lib'")
                            .c_str()),
            0);
  const auto c = check_root(r, {}, {{"VIRTUAL_ENV", "/home/u/venv"}});
  bool framework_runtime = false;
  for (const auto& f : c.findings("runtime-too-new-for-driver"))
    framework_runtime =
        framework_runtime || contains(f["title"], "CUDA runtime 13.0 (torch 2.9.1+cu130 in /home/u/venv)");
  EXPECT_TRUE(framework_runtime) << c.ids() << c.report["runtime"]["cudarts"].dump(1);
}

}  // namespace
}  // namespace cudoctor::testing
