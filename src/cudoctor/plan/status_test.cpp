// A release's status in the knowledge base against the planner: what is planned or withdrawn
// is shown with its status and never recommended, by `plan` or by the fixes of `check`.
#include <gtest/gtest.h>

#include <array>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/kb/kb_test_support.hpp"
#include "cudoctor/plan/plan.hpp"

namespace cudoctor::plan {
namespace {

using kb::KnowledgeBase;

util::Version v(const char* s) {
  return *util::Version::parse(s);
}

using kb::testing::files_with;

// torch with one release per entry: {version, status, extra JSON members}.
std::string torch(const std::vector<std::array<std::string, 3>>& releases) {
  std::string rel;
  for (const auto& [version, status, extra] : releases)
    rel += (rel.empty() ? "" : ",") + std::string(R"({"version": ")") + version + R"(", "status": ")" + status +
           R"(", "variants": [{"cuda": "12.4", "archs": ["8.0", "9.0"], "install": "pip install \"torch==)" + version +
           R"(.*\" --index-url https://download.pytorch.org/whl/cu124"}], "source": "https://a/")" + extra + "}";
  return R"({"frameworks": [{"name": "torch", "display": "PyTorch", "releases": [)" + rel + "]}]}";
}

TEST(PlanStatus, PlannedAndWithdrawnReleasesAreNeverRecommended) {
  const auto kb =
      KnowledgeBase::load(files_with({{"frameworks.json", torch({{"2.10", "planned", R"(, "date": "2026-10-28")"},
                                                                 {"2.9", "withdrawn", R"(, "note": "a broken wheel")"},
                                                                 {"2.8", "secondary", ""}})}}));
  ASSERT_TRUE(kb) << kb.error();
  Inputs in;
  in.cc = v("9.0");
  in.driver = v("580.65.06");
  in.framework = "torch";
  const auto p = make_plan(in, *kb);
  ASSERT_EQ(p.builds.size(), 3u);
  EXPECT_EQ(p.builds[0].fit, Fit::no);
  EXPECT_EQ(p.builds[0].why, "planned, not released by " + kb->date() + " (announced for 2026-10-28)");
  EXPECT_EQ(p.builds[1].fit, Fit::no);
  EXPECT_EQ(p.builds[1].why, "withdrawn: a broken wheel");
  EXPECT_EQ(p.builds[2].fit, Fit::works);
  EXPECT_EQ(p.builds[2].status, "secondary");
  const auto* best = recommended(p);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->release, "2.8");
  const auto rec = recommended(*kb, "torch", {v("9.0")}, v("580.65.06"));
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->release, "2.8") << "the judgement check uses picks the same";
}

}  // namespace
}  // namespace cudoctor::plan
