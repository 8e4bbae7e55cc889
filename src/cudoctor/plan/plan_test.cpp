#include "cudoctor/plan/plan.hpp"

#include <gtest/gtest.h>

#include "frozen_kb.hpp"

// Planner logic on the knowledge base frozen under tests/fixtures/kb/: a release added to the
// live data/ changes none of these expectations.
namespace cudoctor::plan {
namespace {

const kb::KnowledgeBase& frozen() {
  return testing::frozen_kb();
}

util::Version v(const char* s) {
  return *util::Version::parse(s);
}

const BuildLine* build(const Plan& p, const std::string& fw, const std::string& release, const std::string& cuda) {
  for (const auto& b : p.builds)
    if (b.framework == fw && b.release == release && b.cuda.str() == cuda) return &b;
  return nullptr;
}

Fit toolkit(const Plan& p, const std::string& cuda) {
  for (const auto& t : p.toolkits)
    if (t.cuda.str() == cuda) return t.fit;
  ADD_FAILURE() << "no toolkit line for " << cuda;
  return Fit::no;
}

// The source article's machine: an RTX 4060 Laptop GPU (sm_89) on driver 535.104.05.
TEST(Plan, ArticleLaptopOnDriver535) {
  Inputs in;
  in.cc = v("8.9");
  in.driver = v("535.104.05");
  const auto p = make_plan(in, frozen());
  EXPECT_EQ(p.architecture, "Ada Lovelace");
  EXPECT_EQ(p.driver_max_cuda->str(), "12.2");
  EXPECT_EQ(toolkit(p, "12.2"), Fit::works);
  EXPECT_EQ(toolkit(p, "11.8"), Fit::works);
  EXPECT_EQ(toolkit(p, "12.4"), Fit::works_compat);
  EXPECT_EQ(toolkit(p, "13.0"), Fit::no);
  // 11.7 cannot compile for sm_89, but its sm_86 cubins run there (Ada compatibility guide 1.2).
  EXPECT_EQ(toolkit(p, "11.7"), Fit::works);
  for (const auto& t : p.toolkits) {
    if (t.cuda.str() == "11.7") {
      EXPECT_NE(t.why.find("sm_80/sm_86/sm_87 cubins, which run on sm_89"), std::string::npos) << t.why;
    }
  }
  // CUDA 10.2 has no sm_8x at all, but its compute_75 PTX is JIT-compiled for sm_89 by a driver that runs 10.2.
  EXPECT_EQ(toolkit(p, "10.2"), Fit::works);
  for (const auto& t : p.toolkits) {
    if (t.cuda.str() == "10.2") {
      EXPECT_NE(t.why.find("only through compute_75 PTX"), std::string::npos) << t.why;
    }
  }
  // The README's example: torch 1.13 and 2.0 cu117 run on sm_89 through their sm_86 cubins.
  for (const auto* release : {"1.13", "2.0"}) {
    const auto* cu117 = build(p, "torch", release, "11.7");
    ASSERT_NE(cu117, nullptr) << release;
    EXPECT_EQ(cu117->fit, Fit::works) << release << ": " << cu117->why;
    EXPECT_EQ(cu117->runs_via, "sm_86 cubin") << release;
    EXPECT_TRUE(cu117->same_major_cubin);
  }
  const auto* cu121 = build(p, "torch", "2.5", "12.1");
  ASSERT_NE(cu121, nullptr);
  EXPECT_EQ(cu121->fit, Fit::works);
  EXPECT_EQ(cu121->install, "pip install \"torch==2.5.*\" --index-url https://download.pytorch.org/whl/cu121");
  EXPECT_EQ(build(p, "torch", "2.5", "12.4")->fit, Fit::works_compat);
  const auto* cu130 = build(p, "torch", "2.9", "13.0");
  EXPECT_EQ(cu130->fit, Fit::no);
  EXPECT_EQ(cu130->why, "needs driver ≥ 580.65.06");
  ASSERT_FALSE(p.unlocks.empty());
  EXPECT_EQ(p.unlocks.front().driver.str(), "580.65.06");
  EXPECT_NE(p.unlocks.front().what.find("PyTorch 2.9–2.14 cu130"), std::string::npos) << p.unlocks.front().what;
}

TEST(Plan, Rtx5090OnDriver550RunsNothing) {
  Inputs in;
  in.cc = v("12.0");
  in.driver = v("550.54.14");
  const auto p = make_plan(in, frozen());
  EXPECT_FALSE(p.driver_runs_gpu);
  for (const auto& b : p.builds) EXPECT_EQ(b.fit, Fit::no) << b.display << " " << b.release;
  EXPECT_NE(p.headline.find("570.26"), std::string::npos) << p.headline;
  ASSERT_FALSE(p.unlocks.empty());
  EXPECT_EQ(p.unlocks.front().driver.str(), "570.26");
  EXPECT_NE(p.unlocks.front().what.find("CUDA 12.8 builds (PyTorch 2.7–2.11 cu128)"), std::string::npos)
      << p.unlocks.front().what;
  EXPECT_NE(p.unlocks.front().what.find("which sm_120 needs"), std::string::npos);
  // Builds without sm_120 kernels are not offered as unlocked by any driver.
  EXPECT_FALSE(build(p, "torch", "2.5", "12.4")->unlock_driver);
  EXPECT_FALSE(build(p, "torch", "2.6", "12.6")->unlock_driver) << "CUDA 12.6 cannot compile for sm_120";
}

TEST(Plan, Kepler35KeepsOldToolkitsAndBuilds) {
  Inputs in;
  in.cc = v("3.5");
  const auto p = make_plan(in, frozen());
  EXPECT_EQ(toolkit(p, "11.8"), Fit::works);
  EXPECT_EQ(toolkit(p, "12.0"), Fit::no);
  for (const auto& b : p.builds) {
    if (b.framework == "torch") {
      EXPECT_EQ(b.fit, Fit::no) << "torch " << b.release << " cu" << b.cuda.str();
    }
  }
  EXPECT_EQ(build(p, "tensorflow", "2.14", "11.8")->fit, Fit::works);
  EXPECT_EQ(build(p, "tensorflow", "2.15", "12.2")->fit, Fit::no);
  EXPECT_EQ(build(p, "cupy", "cupy-cuda11x", "11.2")->fit, Fit::works);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.front().find("R470"), std::string::npos);
}

TEST(Plan, PtxOnlyNeedsTheNativeDriver) {
  // torch 2.9 cu130 reaches sm_121 through its sm_120 cubin (same major) - not PTX; a
  // hypothetical sm_122 would be too. sm_103 is reached by no cubin and no PTX <= 10.3.
  Inputs in;
  in.cc = v("10.3");
  in.driver = v("580.159.04");
  const auto p = make_plan(in, frozen());
  const auto* b = build(p, "torch", "2.10", "13.0");
  EXPECT_EQ(b->fit, Fit::works) << b->why << " (sm_100 cubin runs on 10.3)";
}

TEST(Plan, FrameworkFilter) {
  Inputs in;
  in.cc = v("9.0");
  in.framework = "torch";
  in.framework_version = "2.5";
  const auto p = make_plan(in, frozen());
  ASSERT_EQ(p.builds.size(), 3u);
  for (const auto& b : p.builds) EXPECT_EQ(b.release, "2.5");
}

}  // namespace
}  // namespace cudoctor::plan
