// Two H200 nodes compared: the cause of a failure on one side comes first, and noise never
// shows as a difference.
#include "cudoctor/fleet/diff.hpp"

#include <gtest/gtest.h>

#include "fleet_reports.hpp"

namespace cudoctor::fleet {
namespace {

Digest digest(snapshot::Snapshot s, const std::string& file) {
  auto d = read_report(testing::report_text(std::move(s)), file);
  if (!d) throw std::runtime_error(d.error());
  return std::move(d).value();
}

TEST(Diff, HealthyAgainstBrokenH200PutsTheCauseFirst) {
  const auto good = digest(testing::h200_node("gpu-001", 1), "good.json");
  auto bad_snap = testing::with_baked_libcuda(testing::h200_node("gpu-002", 2));
  bad_snap.toolkit.cuda_home = "/opt/cuda";  // a difference that explains nothing
  const auto bad = digest(std::move(bad_snap), "bad.json");
  const auto d = diff(good, bad);
  ASSERT_FALSE(d.problems.empty());
  EXPECT_EQ(d.problems[0].side, 'b');
  EXPECT_EQ(d.problems[0].problem.id, "driver-version-mismatch");
  ASSERT_FALSE(d.problems[0].because.empty());
  EXPECT_EQ(d.problems[0].because[0], "driver.library.libcuda.so.1");
  ASSERT_GE(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].key, "driver.library.libcuda.so.1");
  EXPECT_EQ(d.changes[0].a, "580.159.04 /usr/local/nvidia/lib64/libcuda.so.580.159.04");
  EXPECT_EQ(d.changes[0].b, "570.124.06 /usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06");
  EXPECT_EQ(d.changes[0].explains, std::vector<std::string>{"driver-version-mismatch"});
  const auto home =
      std::find_if(d.changes.begin(), d.changes.end(), [](const Change& c) { return c.key == "env.CUDA_HOME"; });
  ASSERT_NE(home, d.changes.end());
  EXPECT_TRUE(home->explains.empty());
  EXPECT_GT(home - d.changes.begin(), 0);
  for (const auto& c : d.changes)
    EXPECT_TRUE(c.key.find("temperature") == std::string::npos && c.key.find("uuid") == std::string::npos &&
                c.key != "host.hostname")
        << c.key;
}

TEST(Diff, IdenticalMachinesDifferInNothingAcrossTenRuns) {
  const auto first = digest(testing::h200_node("gpu-000", 0), "0.json");
  for (int seed = 1; seed <= 10; ++seed) {
    const auto other = digest(testing::h200_node("gpu-" + std::to_string(seed), seed * 37), "n.json");
    const auto d = diff(first, other);
    EXPECT_TRUE(d.changes.empty()) << seed << ": " << d.changes.front().key;
    EXPECT_TRUE(d.problems.empty()) << seed;
    EXPECT_EQ(d.same, first.facts.size());
  }
}

TEST(Diff, AStateFaultIsNamedWithoutAFactBehindIt) {
  const auto good = digest(testing::h200_node("a", 1), "a.json");
  const auto bad = digest(testing::with_wrong_gemm(testing::h200_node("b", 2)), "b.json");
  const auto d = diff(good, bad);
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].problem.id, "gemm-wrong-result");
  EXPECT_TRUE(d.problems[0].because.empty());
  EXPECT_TRUE(d.changes.empty());
}

TEST(NamesValue, WholeWordsOnly) {
  Problem p;
  p.text = "Kernel module 580.159.04 but user-space driver 570.124.06\n/usr/lib/libcuda.so.570.124.06";
  EXPECT_TRUE(names_value(p, "driver.user_space", "570.124.06"));
  EXPECT_FALSE(names_value(p, "x", "70.124"));
  EXPECT_FALSE(names_value(p, "x", "580.159"));
  EXPECT_TRUE(names_value(p, "x", "9.9 /elsewhere/libcuda.so.570.124.06"));
  EXPECT_FALSE(names_value(p, "x", "not found"));
  p.text = "torch opens libcublas.so.13 at run time.";
  EXPECT_TRUE(names_value(p, "torch.library.libcublas.so.13", "not found"));
  EXPECT_FALSE(names_value(p, "torch.library.libcublas.so.1", "not found"));
}

}  // namespace
}  // namespace cudoctor::fleet
