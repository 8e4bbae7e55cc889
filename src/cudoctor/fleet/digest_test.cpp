// Reports read back: the real H200 report's facts, and what a broken or foreign file gives.
#include "cudoctor/fleet/digest.hpp"

#include <gtest/gtest.h>

#include "fleet_reports.hpp"

namespace cudoctor::fleet {
namespace {

std::string value(const Digest& d, std::string_view key) {
  const auto* f = d.find(key);
  return f ? f->value : "(no such fact)";
}

TEST(Digest, TheRealH200ReportsStableFacts) {
  const auto d = read_report(testing::report_text(testing::h200_node("gpu-017", 17)), "gpu-017.json");
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->host, "gpu-017");
  EXPECT_TRUE(d->healthy);
  EXPECT_EQ(value(*d, "driver.kernel_module"), "580.159.04 (open)");
  EXPECT_EQ(value(*d, "driver.user_space"), "580.159.04");
  EXPECT_EQ(value(*d, "driver.cuda"), "13.0");
  EXPECT_EQ(value(*d, "driver.library.libcuda.so.1"), "580.159.04 /usr/local/nvidia/lib64/libcuda.so.580.159.04");
  EXPECT_EQ(value(*d, "gpu.count"), "1");
  EXPECT_EQ(value(*d, "gpu0.name"), "NVIDIA H200");
  EXPECT_EQ(value(*d, "gpu0.compute_capability"), "9.0");
  EXPECT_EQ(value(*d, "gpu0.pcie"), "gen5 x16 (max gen5 x16)");
  EXPECT_EQ(value(*d, "toolkit.in_effect"), "13.0.88 /usr/local/cuda-13.0");
  EXPECT_EQ(value(*d, "torch.version"), "2.11.0+cu130");
  EXPECT_EQ(value(*d, "torch.cuda"), "13.0");
  EXPECT_EQ(value(*d, "torch.library.libcudart.so.13"),
            "13 /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/../../nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(value(*d, "wheel.nvidia_cublas"), "13.1.0.3");
  EXPECT_EQ(value(*d, "jax.version"), "0.11.2");
  EXPECT_EQ(value(*d, "env.LD_LIBRARY_PATH"), "/usr/local/nvidia/lib64:/usr/local/nvidia/lib");
  // What names the machine or changes by the minute is no fact at all.
  for (const auto& f : d->facts) {
    EXPECT_EQ(f.value.find("GPU-100017"), std::string::npos) << f.key;
    EXPECT_EQ(f.value.find("gpu-017"), std::string::npos) << f.key;
    EXPECT_EQ(f.key.find("temperature"), std::string::npos) << f.key;
  }
  EXPECT_TRUE(
      std::is_sorted(d->facts.begin(), d->facts.end(), [](const Fact& a, const Fact& b) { return a.key < b.key; }));
}

TEST(Digest, BrokenNodeKeepsItsProblemsAndTheBreak) {
  const auto d = read_report(testing::report_text(testing::with_baked_libcuda(testing::h200_node("n", 1))), "n.json");
  ASSERT_TRUE(d) << d.error();
  EXPECT_FALSE(d->healthy);
  EXPECT_EQ(d->break_layer, "L1");
  EXPECT_EQ(d->break_finding, "driver-version-mismatch");
  const auto* p = d->problem("driver-version-mismatch");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->severity, "error");
  EXPECT_EQ(p->title, "Kernel module 580.159.04 but user-space driver 570.124.06");
  for (const auto& q : d->problems) EXPECT_TRUE(q.severity == "error" || q.severity == "warn") << q.id;
}

TEST(Digest, WhatIsNotAReportSaysWhy) {
  const auto full = testing::report_text(testing::h200_node("n", 1));
  const auto truncated = read_report(full.substr(0, full.size() / 2), "t.json");
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error(),
            "truncated: the JSON stops at byte " + std::to_string(full.size() / 2) + " before the report closes");
  const auto foreign = read_report(R"({"name": "torch", "version": "2.5"})", "f.json");
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error(), "not a cudoctor report (no schema, verdict and findings: write one with cudoctor --json)");
  auto newer = full;
  newer.replace(newer.find("\"schema\": 1"), 11, "\"schema\": 9");
  const auto n = read_report(newer, "n.json");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(), "report schema 9 is newer than this cudoctor reads (1): upgrade cudoctor");
  EXPECT_EQ(read_report("  \n", "e.json").error(), "empty: no report in it");
  EXPECT_EQ(read_report("PK\x03\x04 zip", "z.json").error(), "not JSON: Invalid value. (at byte 0)");
  // A million brackets deep: parsed without recursion, so an error and not a crash.
  const auto deep = read_report(std::string(1'000'000, '['), "d.json");
  ASSERT_FALSE(deep);
  EXPECT_NE(deep.error().find("truncated"), std::string::npos) << deep.error();
  // Fields of the wrong type read as absent rather than throwing.
  const auto odd = read_report(R"({"schema": 1, "verdict": {"healthy": "yes"}, "findings": [7, {"severity": 3}],
                                   "gpus": {"x": 1}, "driver": [], "pythons": [{"frameworks": [null]}]})",
                               "o.json");
  ASSERT_TRUE(odd) << odd.error();
  EXPECT_TRUE(odd->problems.empty());
}

}  // namespace
}  // namespace cudoctor::fleet
