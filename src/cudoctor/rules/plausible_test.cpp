// Answers that cannot be true, and the messages that used to read as healthy or garbled, on
// variations of the real H200 snapshot (tests/fixtures/snapshots).
#include "cudoctor/rules/plausible.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cudoctor/report/report.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"
#include "snapshots.hpp"

namespace cudoctor::rules {
namespace {

constexpr const char* k_nvml = "/usr/local/nvidia/lib64/libnvidia-ml.so.1";
constexpr const char* k_libcuda = "/usr/local/nvidia/lib64/libcuda.so.580.159.04";
constexpr const char* k_cudart = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13";

snapshot::Snapshot h200() {
  return testing::h200_snapshot();
}
const Finding* find(const std::vector<Finding>& fs, std::string_view id) {
  return testing::find_finding(fs, id);
}

TEST(Plausible, Bounds) {
  for (const char* cc : {"1.0", "9.0", "12.0", "20.9", ""}) EXPECT_TRUE(plausible_compute_capability(cc)) << cc;
  for (const char* cc : {"1000.0", "21.0", "0.0", "9.10", "-2147483648.2147483647", "9", "x"})
    EXPECT_FALSE(plausible_compute_capability(cc)) << cc;
  for (const int v : {0, 1000, 13000, 99990}) EXPECT_TRUE(plausible_cuda_version(v)) << v;
  for (const int v : {-12020, -2147483647 - 1, 1, 999, 100000}) EXPECT_FALSE(plausible_cuda_version(v)) << v;
}

TEST(Plausible, NvmlReplyWithoutInitResultIsNotAnEmptyError) {
  auto snap = h200();
  snap.gpus[0].nvml.reset();
  snap.driver.nvml = {};  // what a reply of "{}" parses to
  snap.driver.nvml.library = k_nvml;
  snap.driver.nvml.outcome.status = snapshot::ChildStatus::ok;
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "nvml-implausible");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "NVML answered with values that cannot be true: no result of nvmlInit in its reply");
  EXPECT_EQ(f->evidence, std::vector<std::string>{std::string(k_nvml) + ": no result of nvmlInit in its reply"});
  EXPECT_EQ(find(fs, "nvml-error"), nullptr) << "not \"NVML:  ()\"";
  EXPECT_EQ(find(fs, "nvml-ok"), nullptr);
  EXPECT_EQ(report::judge(fs).break_finding, "nvml-implausible");
}

TEST(Plausible, NvmlVersionsAndComputeCapabilityOutOfRange) {
  auto snap = h200();
  snap.driver.nvml.cuda_driver_version = -12020;
  snap.gpus[0].nvml->compute_capability = "-2147483648.2147483647";
  auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "nvml-implausible");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title,
            "NVML answered with values that cannot be true: nvmlSystemGetCudaDriverVersion: -12020 (CUDA -12.-2) (and "
            "1 more)");
  ASSERT_EQ(f->evidence.size(), 2u);
  EXPECT_EQ(f->evidence[1], std::string(k_nvml) + ": GPU 0: compute capability -2147483648.2147483647");
  EXPECT_EQ(find(fs, "nvml-ok"), nullptr) << "no ✓ line for these values";
  snap = h200();
  snap.gpus[0].nvml->compute_capability = "1000.0";
  fs = run_all(snap, kb::builtin());
  ASSERT_NE(find(fs, "nvml-implausible"), nullptr);
  EXPECT_EQ(find(fs, "nvml-implausible")->title,
            "NVML answered with values that cannot be true: GPU 0: compute capability 1000.0");
}

TEST(Plausible, NvmlListsMoreGpusThanTheBusAndTheDriverApi) {
  auto snap = h200();
  for (int i = 1; i < 64; ++i) {
    snapshot::Gpu g;
    g.nvml = *snap.gpus[0].nvml;
    g.nvml->index = i;
    snap.gpus.push_back(g);
  }
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "nvml-implausible");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title,
            "NVML answered with values that cannot be true: nvmlDeviceGetCount: 64 GPUs, but the PCI bus holds 1 "
            "NVIDIA GPU");
  const auto* c = find(fs, "gpu-count-nvml-vs-cuda");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->title, "NVML lists 64 GPUs but the CUDA driver API 1");
  EXPECT_EQ(c->evidence, (std::vector<std::string>{std::string(k_nvml) + ": nvmlDeviceGetCount = 64",
                                                   std::string(k_libcuda) + ": cuDeviceGetCount = 1"}));
  // CUDA_VISIBLE_DEVICES narrows the driver's view: then the counts may differ.
  auto narrowed = snap;
  narrowed.runtime.cuda_visible_devices = "0";
  EXPECT_EQ(find(run_all(narrowed, kb::builtin()), "gpu-count-nvml-vs-cuda"), nullptr);
}

TEST(Plausible, UnknownNvmlReturnCodeShowsItsNumber) {
  auto snap = h200();
  snap.gpus[0].nvml.reset();
  snap.driver.nvml.init_code = 1234;
  snap.driver.nvml.init_error_name = "NVML_ERROR_?";
  snap.driver.nvml.init_error_string = "Unknown Error";
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "nvml-error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "NVML: Unknown Error (return code 1234)");
  EXPECT_EQ(f->evidence[0], std::string(k_nvml) + ": nvmlInit_v2() = 1234 return code 1234 \"Unknown Error\"");
}

TEST(Plausible, DriverApiAndRuntimeOutOfRange) {
  auto snap = h200();
  snap.runtime.driver_api.driver_version = -12020;
  snap.runtime.driver_api.devices[0].compute_capability = "1000.0";
  auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "cuda-driver-implausible");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title,
            "The CUDA driver API answered with values that cannot be true: cuDriverGetVersion: -12020 (CUDA "
            "-12.-2) (and 1 more)");
  EXPECT_EQ(f->evidence[1], std::string(k_libcuda) + ": device 0: compute capability 1000.0");
  EXPECT_EQ(find(fs, "cuda-driver-ok"), nullptr);
  snap = h200();
  snap.runtime.cudarts[0].runtime_version = -2147483647 - 1;
  fs = run_all(snap, kb::builtin());
  const auto* r = find(fs, "cuda-runtime-implausible");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->title,
            "The CUDA runtime (toolkit /usr/local/cuda-13.0) answered with values that cannot be true: "
            "cudaRuntimeGetVersion: -2147483648 (CUDA -2147483.-64)");
  EXPECT_EQ(find(fs, "cuda-runtime-ok"), nullptr);
}

TEST(Plausible, RuntimeThatCrashedBeforeReportingIsNamedByItsFile) {
  auto snap = h200();
  auto& c = snap.runtime.cudarts[0];
  c.runtime_version = 0;
  c.outcome = {snapshot::ChildStatus::crashed, 11, 0, 0.1, "SIGSEGV"};
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "cuda-runtime-failed");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, std::string("CUDA runtime at ") + k_cudart + " (toolkit /usr/local/cuda-13.0) crashed: SIGSEGV");
}

TEST(Plausible, ComputeWithoutCublasSaysGemmsDidNotRun) {
  auto snap = h200();
  snap.runtime.compute[0].cublas.clear();
  snap.runtime.compute[0].gemms.clear();
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "compute-ok");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "GPU 0: copies match; GEMMs not run: no cuBLAS found");
  EXPECT_EQ(f->evidence.back(), std::string("libraries: ") + k_cudart + ", no cuBLAS");
}

TEST(Plausible, EnvironmentListsCutShortAreAnInfoFinding) {
  auto snap = h200();
  snap.python.lists_cut = {{"/opt/conda/envs", 20000, 10000}};
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "python-envs-not-inspected");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::info);
  EXPECT_EQ(f->title, "10000 entries not inspected: /opt/conda/envs lists 20000 Python environments");
  EXPECT_EQ(f->evidence, std::vector<std::string>{"/opt/conda/envs: 20000 entries, the first 10000 inspected"});
  EXPECT_TRUE(report::judge(fs).healthy);
}

}  // namespace
}  // namespace cudoctor::rules
