// 200 H200 nodes with three planted faults: exactly those nodes are named, with their causes.
#include "cudoctor/fleet/fleet.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "fleet_reports.hpp"

namespace cudoctor::fleet {
namespace {

std::string node_name(int i) {
  return fmt::format("gpu-{:03}", i);
}

FleetReport two_hundred_nodes() {
  Aggregate agg;
  for (int i = 0; i < 200; ++i) {
    auto s = testing::h200_node(node_name(i), i);
    if (i == 42) s = testing::with_baked_libcuda(std::move(s));
    if (i == 117) s = testing::with_wrong_gemm(std::move(s));
    if (i == 180) s = testing::with_torch_lacking_cublas(std::move(s));
    auto d = read_report(testing::report_text(std::move(s)), node_name(i) + ".json");
    if (!d) throw std::runtime_error(d.error());
    agg.add(std::move(d).value());
  }
  agg.skip("gpu-999.json", "truncated: the JSON stops at byte 100 before the report closes");
  return std::move(agg).finish();
}

TEST(Fleet, ThreePlantedFaultsAreExactlyTheBrokenNodes) {
  const auto r = two_hundred_nodes();
  ASSERT_EQ(r.nodes.size(), 200u);
  EXPECT_EQ(r.broken, 3u);
  std::map<std::string, std::string> broken;
  for (const auto& n : r.nodes)
    if (!n.healthy) broken[n.name] = n.break_finding;
  EXPECT_EQ(broken, (std::map<std::string, std::string>{{"gpu-042", "driver-version-mismatch"},
                                                        {"gpu-117", "gemm-wrong-result"},
                                                        {"gpu-180", "framework-library-missing"}}));
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].file, "gpu-999.json");
}

TEST(Fleet, ConfigurationsAndWhatSetsEachApart) {
  const auto r = two_hundred_nodes();
  // Two faults change the set-up (their own groups); the wrong GEMM does not.
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[0].nodes.size(), 198u);
  EXPECT_EQ(r.groups[0].broken, 1u);
  ASSERT_EQ(r.groups[0].outliers.size(), 1u);
  const auto& ol = r.groups[0].outliers[0];
  EXPECT_EQ(r.nodes[ol.node].name, "gpu-117");
  EXPECT_EQ(ol.extra, std::vector<std::string>{"gemm-wrong-result"});
  EXPECT_TRUE(ol.lacking.empty());
  std::set<std::string> apart;
  for (std::size_t g = 1; g < r.groups.size(); ++g) {
    ASSERT_EQ(r.groups[g].nodes.size(), 1u);
    const auto& n = r.nodes[r.groups[g].nodes[0]];
    ASSERT_FALSE(r.groups[g].differs.empty());
    const auto& first = r.groups[g].differs[0];
    apart.insert(n.name + " " + first.key + " " + first.b);
  }
  EXPECT_EQ(apart, (std::set<std::string>{
                       "gpu-042 driver.library.libcuda.so.1 570.124.06 /usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06",
                       "gpu-180 torch.library.libcublas.so.13 not found"}));
  EXPECT_EQ(r.problem_counts.at("driver-version-mismatch"), 1u);
}

TEST(Fleet, SameHostNameTwiceKeepsBothApart) {
  Aggregate agg;
  for (const char* file : {"a/vm.json", "b/vm.json"}) {
    auto d = read_report(testing::report_text(testing::h200_node("vm", 1)), file);
    ASSERT_TRUE(d);
    agg.add(std::move(d).value());
  }
  const auto r = std::move(agg).finish();
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].name, "vm");
  EXPECT_EQ(r.nodes[1].name, "vm (vm.json)");
  EXPECT_EQ(r.groups.size(), 1u);
}

}  // namespace
}  // namespace cudoctor::fleet
