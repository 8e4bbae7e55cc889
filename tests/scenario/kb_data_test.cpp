// The knowledge base as it ships (data/, no --kb): what `kb`, `plan` and `check` say about the
// releases it was brought up to date with, and what they say about what it does not know.
// These follow the data on purpose: a record that changes must change what they expect.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "machines.hpp"
#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

// The knowledge base's date as `cudoctor kb` prints it.
std::string kb_date() {
  const auto r = run_cudoctor({"kb"});
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex("compiled (\\d{4}-\\d{2}-\\d{2})"))) return "";
  return m[1];
}

nlohmann::json plan_json(const std::vector<std::string>& args, int expect_rc) {
  std::vector<std::string> full = {"plan", "--json"};
  full.insert(full.end(), args.begin(), args.end());
  const auto r = run_cudoctor(full);
  EXPECT_EQ(r.exit_code, expect_rc) << r.err << r.out;
  return nlohmann::json::parse(r.out);
}

nlohmann::json build(const nlohmann::json& p, const std::string& fw, const std::string& release,
                     const std::string& cuda) {
  for (const auto& b : p["builds"])
    if (b["framework"] == fw && b["release"] == release && b["cuda"] == cuda) return b;
  return nullptr;
}

TEST(ScenarioKbData, DriversAndToolkitsOf2026) {
  const auto r620 = run_cudoctor({"kb", "driver", "620.70.06"});
  EXPECT_EQ(r620.exit_code, 0);
  EXPECT_TRUE(contains(r620.out, "newest CUDA supported natively: 13.5")) << r620.out;
  EXPECT_TRUE(contains(r620.out, "R620: Long Term Support Branch")) << r620.out;
  EXPECT_TRUE(contains(run_cudoctor({"kb", "driver", "610.43.02"}).out, "newest CUDA supported natively: 13.3"));
  const auto r615 = run_cudoctor({"kb", "driver", "615.71.09"});
  EXPECT_TRUE(contains(r615.out, "newest CUDA supported natively: 13.4"));
  EXPECT_TRUE(contains(r615.out, "status: secondary")) << "R615 rests on secondary sources: " << r615.out;

  const auto t133 = run_cudoctor({"kb", "toolkit", "13.3"});
  EXPECT_EQ(t133.exit_code, 0) << t133.out;
  EXPECT_TRUE(contains(t133.out, "CUDA 13.3 GA: driver ≥ 610.43.02 (Linux) [secondary]")) << t133.out;
  EXPECT_TRUE(contains(t133.out, "CUDA 13.3 Update 1: driver ≥ 610.43.02 (Linux)")) << t133.out;
  const auto t134 = run_cudoctor({"kb", "toolkit", "13.4"});
  EXPECT_TRUE(
      contains(t134.out, "CUDA 13.4 GA: driver ≥ R615 (Linux; the exact minimum is not established) [secondary]"))
      << t134.out;
  EXPECT_TRUE(contains(t134.out, "sm_103 sm_107 sm_110")) << "Rubin in cc order: " << t134.out;
  const auto t135 = run_cudoctor({"kb", "toolkit", "13.5"});
  EXPECT_TRUE(contains(t135.out, "CUDA 13.5 GA: driver ≥ R620")) << t135.out;
}

TEST(ScenarioKbData, VoltaOnTorch211GetsTheBuildThatStillCarriesSm70) {
  const auto p = plan_json({"--gpu", "V100", "--driver", "580.95.05", "--framework", "torch==2.11"}, 0);
  EXPECT_EQ(p["inputs"]["cc"], "7.0");
  const auto cu128 = build(p, "torch", "2.11", "12.8");
  EXPECT_EQ(cu128["fit"], "no");
  EXPECT_TRUE(contains(cu128["why"], "no kernels for sm_70")) << cu128.dump();
  EXPECT_EQ(build(p, "torch", "2.11", "12.6")["fit"], "works");
  const auto text = run_cudoctor(
      {"plan", "--gpu", "V100", "--driver", "580.95.05", "--framework", "torch==2.11", "--color", "never"});
  EXPECT_TRUE(contains(text.out, "$ pip install \"torch==2.11.*\" --index-url https://download.pytorch.org/whl/cu126"))
      << text.out;
  EXPECT_FALSE(contains(text.out, "whl/cu128")) << text.out;
}

TEST(ScenarioKbData, OnnxRuntime127IsCuda13AndNeeds580) {
  const auto p = plan_json({"--driver", "535.104.05", "--framework", "onnxruntime"}, 0);
  const auto ort127 = build(p, "onnxruntime", "1.27", "13.0");
  ASSERT_FALSE(ort127.is_null()) << p.dump(1);
  EXPECT_EQ(ort127["fit"], "no");
  EXPECT_EQ(ort127["why"], "needs driver ≥ 580.65.06");
  EXPECT_EQ(ort127["unlock_driver"], "580.65.06");
  const auto ort119 = build(p, "onnxruntime", "1.19", "12.0");
  EXPECT_NE(ort119["fit"], "no");
  EXPECT_EQ(ort119["install"], "pip install \"onnxruntime-gpu>=1.19,<1.27\"")
      << "an open range would let pip pick a CUDA 13 wheel on this driver";
  // A release inside a record's range selects that record.
  const auto one = plan_json({"--driver", "535.104.05", "--framework", "onnxruntime==1.22"}, 0);
  ASSERT_EQ(one["builds"].size(), 1u) << one.dump(1);
  EXPECT_EQ(one["builds"][0]["release"], "1.19");
}

TEST(ScenarioKbData, CupyCompilesWithTheNewestCudaOfItsLine) {
  const auto p = plan_json({"--cc", "8.9", "--framework", "cupy"}, 0);
  const auto c11 = build(p, "cupy", "cupy-cuda11x", "11.2");
  EXPECT_NE(c11["fit"], "no") << "CUDA 11.8, which cupy-cuda11x accepts, compiles for sm_89: " << c11.dump();
  const auto c13 = build(p, "cupy", "cupy-cuda13x", "13.0");
  EXPECT_EQ(c13["install"], "pip install \"cupy-cuda13x[ctk]>=14\"") << "[ctk] exists from CuPy 14";
  // An sm_120 GPU: cupy-cuda12x compiles with 12.8 or 12.9, which target it.
  const auto p120 = plan_json({"--cc", "12.0", "--framework", "cupy"}, 0);
  EXPECT_NE(build(p120, "cupy", "cupy-cuda12x", "12.0")["fit"], "no");
}

TEST(ScenarioKbData, APlannedReleaseIsShownAndNeverRecommended) {
  const auto date = kb_date();
  ASSERT_FALSE(date.empty());
  const auto p = plan_json({"--cc", "9.0", "--driver", "620.70.06", "--framework", "torch"}, 0);
  const auto planned = build(p, "torch", "2.15", "13.2");
  ASSERT_FALSE(planned.is_null());
  EXPECT_EQ(planned["status"], "planned");
  EXPECT_EQ(planned["fit"], "no");
  EXPECT_EQ(planned["why"], "planned, not released by " + date + " (announced for 2026-10-28)");
  EXPECT_EQ(build(p, "torch", "2.14", "13.2")["status"], "released");
  EXPECT_TRUE(contains(run_cudoctor({"kb"}).out, "PyTorch releases, 1.12 to 2.15 (2.15 planned)"))
      << "kb says what is only planned";
  const auto only = run_cudoctor({"plan", "--cc", "9.0", "--driver", "620.70.06", "--framework", "torch==2.15"});
  EXPECT_EQ(only.exit_code, 1) << "nothing to install: " << only.out;
  EXPECT_FALSE(contains(only.out, "$ pip install")) << only.out;
}

TEST(ScenarioKbData, ErrorsByTheMessageUsersPaste) {
  const auto e = run_cudoctor({"kb", "error", "CUDA driver version is insufficient"});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_TRUE(contains(e.out, "runtime API 35 cudaErrorInsufficientDriver")) << e.out;
  EXPECT_TRUE(contains(e.out, "message: \"CUDA driver version is insufficient for CUDA runtime version\""));
  EXPECT_TRUE(contains(e.out, "2 causes, told apart by the checks in each:")) << e.out;
  EXPECT_TRUE(contains(e.out, "1. No usable driver at all")) << e.out;
  EXPECT_TRUE(contains(e.out, "2. A driver older than the runtime")) << e.out;
  // A whole pasted line holds the message; any case.
  const auto pasted = run_cudoctor(
      {"kb", "error", "RuntimeError: CUDA error: NO KERNEL IMAGE IS AVAILABLE FOR EXECUTION ON THE DEVICE"});
  EXPECT_TRUE(contains(pasted.out, "runtime API 209 cudaErrorNoKernelImageForDevice")) << pasted.out;
  EXPECT_TRUE(contains(pasted.out, "driver API 209 CUDA_ERROR_NO_BINARY_FOR_GPU")) << pasted.out;
  const auto nvml = run_cudoctor({"kb", "error", "Failed to initialize NVML: Driver/library version mismatch"});
  EXPECT_TRUE(contains(nvml.out, "NVML 18 NVML_ERROR_LIB_RM_VERSION_MISMATCH")) << nvml.out;
  EXPECT_EQ(run_cudoctor({"kb", "error", "the flux capacitor overheated"}).exit_code, 1);
  // Unquoted, as a message is pasted after the command.
  const auto words = run_cudoctor({"kb", "error", "no", "CUDA-capable", "device", "is", "detected"});
  EXPECT_EQ(words.exit_code, 0) << words.err;
  EXPECT_TRUE(contains(words.out, "runtime API 100 cudaErrorNoDevice")) << words.out;
}

// Both causes of 35 that `kb error` lists are real: NVIDIA's libcudart 13 answers
// cudaGetDeviceCount with 35 on a machine with no libcuda at all, and over the real 535 driver
// (CUDA 12.2). The message is the one the knowledge base holds.
TEST(RealCudart, Error35WithoutADriverAndWithAnOldOne) {
  FixtureRoot none;
  add_debian_12(none);
  if (!add_cuda13_toolkit_runtime(none)) GTEST_SKIP() << "no CUDA 13.0 toolkit at /usr/local/cuda-13.0";
  FixtureRoot old;
  add_debian_12(old);
  add_pci(old, {.address = "0000:1b:00.0", .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(old, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(old, "535.309.01");
  if (!add_debian_535_libraries(old) || !add_cuda13_toolkit_runtime(old)) GTEST_SKIP() << "needs Debian's 535 driver";
  for (const auto* r : {&none, &old}) {
    const auto c = check_root(*r);
    ASSERT_FALSE(c.report["runtime"]["cudarts"].empty()) << c.report["runtime"].dump(1);
    const auto& call = c.report["runtime"]["cudarts"][0]["device_count_call"];
    EXPECT_EQ(call["code"], 35) << call;
    EXPECT_EQ(call["message"], "CUDA driver version is insufficient for CUDA runtime version");
  }
  const auto e = run_cudoctor({"kb", "error", "CUDA driver version is insufficient for CUDA runtime version"});
  EXPECT_TRUE(contains(e.out, "1. No usable driver at all")) << e.out;
  EXPECT_TRUE(contains(e.out, "2. A driver older than the runtime")) << e.out;
}

TEST(ScenarioKbData, VersionNamesTheKnowledgeBasesDate) {
  const auto v = run_cudoctor({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(contains(v.out, "knowledge base compiled " + kb_date())) << v.out;
}

// A machine from after the knowledge base: a driver of a branch it has never seen and a GPU id
// not in its table, which NVML names and gives a compute capability for.
TEST(ScenarioKbCoverage, DriverAndGpuNewerThanTheKnowledgeBase) {
  REQUIRE_DEVICE_NODES();
  const auto date = kb_date();
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x3000, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "640.10.01");
  add_driver_libraries(r, "640.10.01", nvml_sim_library());
  ASSERT_TRUE(add_device_nodes(r, 1));
  const std::map<std::string, std::string> nvml = {
      {"NVML_SIM_NAME", "NVIDIA Graphics Device"}, {"NVML_SIM_CC", "10.7"}, {"NVML_SIM_BUS", "1"}};
  const auto c = check_root(r, {}, nvml);
  const auto d = c.finding("driver-newer-than-kb");
  ASSERT_FALSE(d.is_null()) << c.ids();
  EXPECT_EQ(d["severity"], "info");
  EXPECT_EQ(d["title"], "Driver 640.10.01 is newer than every branch the knowledge base (compiled " + date + ") knows");
  EXPECT_TRUE(contains(joined_evidence(d), "newest branch R620 -> CUDA 13.5")) << d.dump(1);
  EXPECT_TRUE(contains(d["detail"], "Assumed: this driver runs at least what R620 runs")) << d.dump(1);
  const auto g = c.finding("gpu-not-in-kb");
  ASSERT_FALSE(g.is_null()) << c.ids();
  EXPECT_EQ(g["severity"], "info");
  EXPECT_EQ(g["title"], "GPU 10de:3000 (NVIDIA Graphics Device) is not in the knowledge base (compiled " + date + ")");
  EXPECT_TRUE(contains(g["detail"], "Assumed: compute capability 10.7, as NVML reports it (Rubin)")) << g.dump(1);
  // No other finding claims a limit the data never held.
  EXPECT_FALSE(contains(c.text_run.out, "CUDA ≤")) << c.text_run.out;
  EXPECT_FALSE(c.has("driver-too-new-for-gpu")) << c.ids();

  const auto plan = run_cudoctor({"plan", "--root", r.path().string(), "--runtime", "--json"}, nvml);
  ASSERT_EQ(plan.exit_code, 0) << plan.err << plan.out;
  const auto p = nlohmann::json::parse(plan.out);
  EXPECT_TRUE(p["driver_max_cuda"].is_null());
  EXPECT_EQ(p["driver_cuda_at_least"], "13.5");
  EXPECT_EQ(p["inputs"]["cc"], "10.7");
  auto wide = nvml;
  wide["COLUMNS"] = "100";  // the sentence on one line
  const auto text = run_cudoctor({"plan", "--root", r.path().string(), "--runtime", "--color", "never"}, wide);
  EXPECT_TRUE(
      contains(text.out, "Driver 640.10.01 is newer than every branch in the knowledge base (compiled " + date + ")"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "at least CUDA 13.5 natively")) << text.out;
  EXPECT_TRUE(contains(text.out, "A sm_107 GPU needs a driver ≥ R615.")) << "a branch, not a driver called 615";
  EXPECT_FALSE(contains(text.out, "supports CUDA ≤")) << text.out;
}

// A venv whose torch is a release the knowledge base lists only as planned (2.15), and one
// newer than every record (2.16).
TEST(ScenarioKbCoverage, TorchNewerThanTheKnowledgeBase) {
  const auto date = kb_date();
  for (const std::string version : {"2.15.0", "2.16.1"}) {
    FixtureRoot r;
    add_debian_12(r);
    build_venv(r, "13.2");
    const std::string site = "/home/u/venv/lib/python3.11/site-packages";
    r.file(site + "/torch/version.py", "__version__ = '" + version + "+cu132'\ndebug = False\ncuda = '13.2'\n");
    fs::rename(r.host(site + "/torch-2.5.1.dist-info"), r.host(site + "/torch-" + version + ".dist-info"));
    r.file(site + "/torch-" + version + ".dist-info/METADATA",
           "Metadata-Version: 2.1\nName: torch\nVersion: " + version + "\n");
    const auto c =
        check_root(r, {"--no-runtime"}, {{"PATH", "/home/u/venv/bin:/usr/bin:/bin"}, {"VIRTUAL_ENV", "/home/u/venv"}});
    const auto f = c.finding("framework-newer-than-kb");
    ASSERT_FALSE(f.is_null()) << version << ": " << c.ids();
    EXPECT_EQ(f["severity"], "info");
    EXPECT_EQ(f["title"], version == "2.15.0"
                              ? "PyTorch 2.15.0+cu132 in /home/u/venv is a release the knowledge base (compiled " +
                                    date + ") knows only as planned"
                              : "PyTorch 2.16.1+cu132 in /home/u/venv is newer than every release the knowledge "
                                "base (compiled " +
                                    date + ") knows");
    EXPECT_TRUE(contains(joined_evidence(f), "newest torch record 2.15 (planned)")) << f.dump(1);
  }
}

}  // namespace
}  // namespace cudoctor::testing
