#include <gtest/gtest.h>

#include "cudoctor/plan/plan.hpp"

namespace cudoctor::plan {
namespace {

int rank(Fit f) {
  return f == Fit::works ? 2 : f == Fit::works_compat ? 1 : 0;
}

// Every release has exactly one build to show: the first of its best fit.
void expect_one_best_per_release(const Plan& p) {
  for (std::size_t i = 0; i < p.builds.size();) {
    std::size_t j = i;
    std::vector<std::size_t> bests;
    int top = 0;
    for (; j < p.builds.size() && p.builds[j].framework == p.builds[i].framework &&
           p.builds[j].release == p.builds[i].release;
         ++j) {
      top = std::max(top, rank(p.builds[j].fit));
      if (p.builds[j].best_of_release) bests.push_back(j);
    }
    ASSERT_EQ(bests.size(), 1u) << p.builds[i].framework << " " << p.builds[i].release;
    EXPECT_EQ(rank(p.builds[bests[0]].fit), top) << p.builds[i].framework << " " << p.builds[i].release;
    for (std::size_t k = i; k < bests[0]; ++k) EXPECT_LT(rank(p.builds[k].fit), top);
    i = j;
  }
}

TEST(PlanBestOfRelease, OneBuildPerReleaseNativeBeforeCompat) {
  const auto kb = kb::KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  for (const char* driver : {"470.256.02", "525.60.13", "535.104.05", "580.65.06"}) {
    Inputs in;
    in.cc = util::Version::parse("8.9");
    in.driver = util::Version::parse(driver);
    const auto p = make_plan(in, *kb);
    ASSERT_FALSE(p.builds.empty());
    expect_one_best_per_release(p);
    EXPECT_EQ(runs_any(p), recommended(p) != nullptr) << driver;
  }
}

TEST(PlanBestOfRelease, NothingRunsStillShowsEachRelease) {
  const auto kb = kb::KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  Inputs in;
  in.cc = util::Version::parse("8.9");
  in.driver = util::Version::parse("390.157");
  const auto p = make_plan(in, *kb);
  EXPECT_FALSE(runs_any(p));
  expect_one_best_per_release(p);
}

}  // namespace
}  // namespace cudoctor::plan
