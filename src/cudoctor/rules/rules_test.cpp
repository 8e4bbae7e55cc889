// Rules on real facts: the snapshot cudoctor took on an H200 machine (a docker container
// with the GPU passed in, driver 580.159.04; tests/fixtures/snapshots), and variations of it.
#include "cudoctor/rules/rules.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cudoctor/report/report.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"
#include "snapshots.hpp"

namespace cudoctor::rules {
namespace {

snapshot::Snapshot h200() {
  return testing::h200_snapshot();
}
const Finding* find(const std::vector<Finding>& fs, std::string_view id) {
  return testing::find_finding(fs, id);
}

TEST(RulesOnH200, RealSnapshotIsHealthy) {
  const auto snap = h200();
  const auto fs = run_all(snap, kb::builtin());
  const auto v = report::judge(fs);
  EXPECT_TRUE(v.healthy) << v.summary;
  ASSERT_NE(find(fs, "gpus-present"), nullptr);
  EXPECT_EQ(find(fs, "gpus-present")->title, "NVIDIA GPU 0000:00:06.0 NVIDIA H200") << "NVML's name; pci.ids lacks it";
  EXPECT_EQ(find(fs, "nvml-ok")->title, "NVML: driver 580.159.04, CUDA 13.0, 1 GPU");
  EXPECT_EQ(find(fs, "nvidia-module-loaded")->title, "nvidia kernel module 580.159.04 loaded (open kernel module)");
  EXPECT_NE(find(fs, "in-container"), nullptr);
}

TEST(RulesOnH200, ImageWithItsOwnLibcudaIsAMismatch) {
  auto snap = h200();
  for (auto& l : snap.driver.libraries)
    if (l.soname == "libcuda.so.1") {
      l.version = "570.124.06";
      l.real_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06";
    }
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "driver-version-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "Kernel module 580.159.04 but user-space driver 570.124.06");
  EXPECT_NE(f->detail.find("a libcuda baked into the image"), std::string::npos);
  EXPECT_EQ(report::judge(fs).break_finding, "driver-version-mismatch");
}

TEST(RulesOnH200, ContainerWithoutDevices) {
  auto snap = h200();
  snap.driver.device_nodes.clear();
  for (auto& l : snap.driver.libraries) l.path.clear();
  snap.driver.nvml = {};
  snap.driver.nvml.outcome.status = snapshot::ChildStatus::not_run;
  const auto fs = run_all(snap, kb::builtin());
  EXPECT_EQ(report::judge(fs).break_finding, "container-no-gpu-access");
  EXPECT_EQ(find(fs, "driver-library-missing"), nullptr) << "follows from the container finding";
}

TEST(RulesOnH200, NvmlErrorExplainedByKnowledgeBase) {
  auto snap = h200();
  snap.gpus[0].nvml.reset();
  snap.driver.nvml.init_code = 15;
  snap.driver.nvml.init_error_name = "NVML_ERROR_GPU_IS_LOST";
  snap.driver.nvml.init_error_string = "GPU is lost";
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = find(fs, "nvml-error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::error);
  EXPECT_NE(f->detail.find("Xid 79"), std::string::npos) << f->detail;
}

TEST(Judge, LowestLayerErrorIsTheBreak) {
  auto l1 = make_finding("no-nvidia-gpu");
  auto l0 = make_finding("wsl1-no-gpu");
  auto warn = make_finding("fact-unreadable");
  const auto v = report::judge({l1, warn, l0});
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.break_layer, Layer::L0);
  EXPECT_EQ(v.break_finding, "wsl1-no-gpu");
  const auto w = report::judge({warn});
  EXPECT_TRUE(w.healthy);
  EXPECT_EQ(w.summary, "No break found; 1 warning to read.");
}

TEST(RulesOnH200, RuntimeAndComputeFromTheRealMachine) {
  const auto snap = h200();
  ASSERT_TRUE(snap.runtime.ran);
  const auto fs = run_all(snap, kb::builtin());
  EXPECT_EQ(find(fs, "cuda-driver-ok")->title, "CUDA driver API 13.0: 1 device, NVIDIA H200 (cc 9.0)");
  ASSERT_NE(find(fs, "compute-ok"), nullptr);
  EXPECT_NE(find(fs, "compute-ok")->title.find("bf16"), std::string::npos);
  EXPECT_EQ(find(fs, "copy-bandwidth-low"), nullptr) << "53 GB/s on a gen 5 x16 link is healthy";
  auto slow = snap;
  for (auto& k : slow.runtime.compute[0].copies) k.gb_per_s /= 10;
  const auto slow_findings = run_all(slow, kb::builtin());
  const auto* low = find(slow_findings, "copy-bandwidth-low");
  ASSERT_NE(low, nullptr);
  EXPECT_NE(low->title.find("of the 63.0 GB/s a PCIe gen 5 x16 link allows"), std::string::npos) << low->title;
  // The same machine with a GEMM that came back wrong.
  auto broken = snap;
  broken.runtime.compute[0].gemms[1].passed = false;
  broken.runtime.compute[0].gemms[1].max_abs_error = 0.5;
  const auto bad = run_all(broken, kb::builtin());
  ASSERT_NE(find(bad, "gemm-wrong-result"), nullptr);
  EXPECT_EQ(report::judge(bad).break_layer, Layer::L5);
}

TEST(RulesOnH200, FrameworksFromTheRealMachine) {
  const auto snap = h200();
  const snapshot::Framework* torch = nullptr;
  for (const auto& e : snap.python.envs)
    for (const auto& f : e.frameworks)
      if (f.name == "torch") torch = &f;
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->version, "2.11.0+cu130");
  EXPECT_EQ(torch->cuda, "13.0");
  const auto fs = run_all(snap, kb::builtin());
  EXPECT_EQ(find(fs, "framework-library-shadowed"), nullptr);
  EXPECT_EQ(find(fs, "framework-library-shadowed-by-newer"), nullptr);
  EXPECT_EQ(find(fs, "framework-no-kernels-for-gpu"), nullptr);
  // The same torch on a driver for CUDA 12: too new; and on an sm_61 GPU: no kernels.
  auto old = snap;
  old.driver.kernel_module.version = "550.54.14";
  const auto too_new = run_all(old, kb::builtin());
  ASSERT_NE(find(too_new, "framework-cuda-too-new-for-driver"), nullptr);
  auto pascal = snap;
  pascal.gpus[0].nvml->compute_capability = "6.1";
  const auto none = run_all(pascal, kb::builtin());
  ASSERT_NE(find(none, "framework-no-kernels-for-gpu"), nullptr);
  EXPECT_NE(find(none, "framework-no-kernels-for-gpu")->title.find("sm_61"), std::string::npos);
}

snapshot::Framework* torch_in(snapshot::Snapshot& s) {
  for (auto& e : s.python.envs)
    for (auto& f : e.frameworks)
      if (f.name == "torch") return &f;
  return nullptr;
}

TEST(RulesOnH200, MinorVersionCompatibilityAndTwoRuntimes) {
  auto snap = h200();
  // A cu128 build on driver 535: CUDA 12.x runs there through minor-version compatibility.
  torch_in(snap)->cuda = "12.8";
  snap.driver.kernel_module.version = "535.104.05";
  const auto torch_too_new = [](const std::vector<Finding>& all) -> const Finding* {
    for (const auto& f : all)
      if (f.id == "framework-cuda-too-new-for-driver" && f.title.starts_with("PyTorch")) return &f;
    return nullptr;
  };
  auto fs = run_all(snap, kb::builtin());
  EXPECT_EQ(torch_too_new(fs), nullptr);
  // Below the CUDA 12 floor (525.60.13) it does not (JAX's CUDA 13 build does not run on either).
  snap.driver.kernel_module.version = "520.61.05";
  fs = run_all(snap, kb::builtin());
  ASSERT_NE(torch_too_new(fs), nullptr);
  EXPECT_NE(torch_too_new(fs)->title.find("needs driver ≥ 525.60.13"), std::string::npos);
  // A second CUDA runtime of another major in the same tree.
  auto two = h200();
  torch_in(two)->libraries.push_back(
      {"libcudart.so.12", "/usr/local/cuda-12.4/lib64/libcudart.so.12", "LD_LIBRARY_PATH", "12.4.127", ""});
  const auto t = run_all(two, kb::builtin());
  ASSERT_NE(find(t, "framework-two-cuda-runtimes"), nullptr);
  EXPECT_NE(find(t, "framework-two-cuda-runtimes")->title.find("libcudart.so.12 and libcudart.so.13"),
            std::string::npos);
}

}  // namespace
}  // namespace cudoctor::rules
