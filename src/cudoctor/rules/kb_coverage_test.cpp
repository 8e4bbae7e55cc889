// What the knowledge base does not know, on the real H200 machine's snapshot changed one fact
// at a time to something newer than the tables.
#include <gtest/gtest.h>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/rules.hpp"
#include "snapshots.hpp"

namespace cudoctor::rules {
namespace {

using testing::find_finding;

std::vector<Finding> coverage(const snapshot::Snapshot& s) {
  return kb_coverage_rules(view::derive(s, kb::builtin()), kb::builtin());
}

std::string dated() {
  return "the knowledge base (compiled " + kb::builtin().date() + ")";
}

TEST(KbCoverage, AMachineTheTablesKnowGetsNone) {
  EXPECT_TRUE(coverage(testing::h200_snapshot()).empty());
}

// NVML gave nothing for the GPU; the driver API's device at the same address names it.
TEST(KbCoverage, AGpuIdNotInTheTableTakesTheDriverApisComputeCapability) {
  auto s = testing::h200_snapshot();
  s.gpus[0].pci.device_id = 0x3021;
  s.gpus[0].nvml.reset();
  s.runtime.driver_api.devices[0].name = "NVIDIA Graphics Device";
  s.runtime.driver_api.devices[0].compute_capability = "10.7";
  const auto m = view::derive(s, kb::builtin());
  ASSERT_EQ(m.ccs.size(), 1u);
  EXPECT_EQ(m.ccs[0].str(), "10.7") << "the checks of kernels judge the GPU the driver reports";
  const auto out = coverage(s);
  const auto* f = find_finding(out, "gpu-not-in-kb");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::info);
  EXPECT_EQ(f->title, "GPU 10de:3021 (NVIDIA Graphics Device) is not in " + dated());
  EXPECT_EQ(f->detail,
            "Assumed: compute capability 10.7, as the CUDA driver API reports it (Rubin); the checks of kernels and "
            "toolkits use it.");
  // Nothing answered: said, and the checks that need it skipped.
  s.runtime.driver_api.devices.clear();
  const auto none = coverage(s);
  const auto* unknown = find_finding(none, "gpu-not-in-kb");
  ASSERT_NE(unknown, nullptr);
  EXPECT_TRUE(unknown->detail.starts_with("Its compute capability is not known")) << unknown->detail;
  // A compute capability of no known architecture.
  s.runtime.driver_api.devices = testing::h200_snapshot().runtime.driver_api.devices;
  s.runtime.driver_api.devices[0].compute_capability = "13.1";
  const auto other = coverage(s);
  const auto* odd = find_finding(other, "gpu-not-in-kb");
  ASSERT_NE(odd, nullptr);
  EXPECT_TRUE(odd->detail.find("compute capability 13.1, which is in no architecture") != std::string::npos)
      << odd->detail;
}

TEST(KbCoverage, AToolkitNewerThanTheTable) {
  auto s = testing::h200_snapshot();
  s.toolkit.toolkits[0].version = "13.9.20";
  s.toolkit.toolkits[0].root = "/usr/local/cuda-13.9";
  const auto out = coverage(s);
  const auto* f = find_finding(out, "toolkit-newer-than-kb");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "CUDA 13.9.20 at /usr/local/cuda-13.9 is newer than every toolkit " + dated() + " knows");
  EXPECT_NE(f->detail.find("any 13.x runtime runs on a driver ≥ 580.65.06"), std::string::npos) << f->detail;
}

TEST(KbCoverage, AFrameworkReleaseNewerThanTheTable) {
  auto s = testing::h200_snapshot();
  s.python.envs[0].frameworks[0].version = "2.99.0+cu135";
  const auto out = coverage(s);
  const auto* f = find_finding(out, "framework-newer-than-kb");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "PyTorch 2.99.0+cu135 in /opt/torch/.venv is newer than every release " + dated() + " knows");
  // JAX 0.11.2 and CuPy 14.2.0 are records of package lines, not releases: never "newer".
  for (const auto& x : out) EXPECT_EQ(x.title.find("JAX"), std::string::npos) << x.title;
}

}  // namespace
}  // namespace cudoctor::rules
