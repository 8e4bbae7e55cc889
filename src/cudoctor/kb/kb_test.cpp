#include "cudoctor/kb/kb.hpp"

#include <gtest/gtest.h>

namespace cudoctor::kb {

TEST(Kb, EmbeddedDataLoadsAndEveryRecordHasASource) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  EXPECT_GE(kb->nvml_return_codes().size(), 30u);
  for (const auto& [code, rc] : kb->nvml_return_codes()) {
    EXPECT_TRUE(rc.source.starts_with("https://")) << rc.name;
    EXPECT_TRUE(rc.name.starts_with("NVML_")) << code;
  }
  const auto* nl = kb->nvml_return_code(9);
  ASSERT_NE(nl, nullptr);
  EXPECT_EQ(nl->name, "NVML_ERROR_DRIVER_NOT_LOADED");
  EXPECT_FALSE(nl->causes.empty());
  EXPECT_EQ(kb->nvml_return_code(18)->name, "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
}

TEST(Kb, BrokenDataIsAClearError) {
  const auto no_source = KnowledgeBase::load(
      {{"nvml_return_codes.json", R"({"records": [{"code": 9, "name": "NVML_ERROR_X", "meaning": "m"}]})"}});
  ASSERT_FALSE(no_source);
  EXPECT_NE(no_source.error().find("no \"source\""), std::string::npos) << no_source.error();
  const auto dup = KnowledgeBase::load({{"nvml_return_codes.json",
                                         R"({"records": [{"code": 1, "name": "A", "meaning": "m", "source": "s"},
                                                          {"code": 1, "name": "B", "meaning": "m", "source": "s"}]})"}});
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().find("listed twice"), std::string::npos);
  EXPECT_FALSE(KnowledgeBase::load({{"nvml_return_codes.json", "{"}}));
}

}  // namespace cudoctor::kb
