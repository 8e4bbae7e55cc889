#include "cudoctor/rules/catalog.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace cudoctor::rules {

TEST(Catalog, IdsAreUniqueKebabCase) {
  std::set<std::string_view> seen;
  for (const auto& e : catalog()) {
    EXPECT_TRUE(seen.insert(e.id).second) << e.id;
    for (const char c : e.id) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << e.id;
  }
}

TEST(Catalog, EveryIdIsDocumented) {
  std::ifstream in(std::string(CUDOCTOR_DATA_DIR) + "/../docs/findings.md");
  ASSERT_TRUE(in) << "docs/findings.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  for (const auto& e : catalog())
    EXPECT_NE(ss.str().find("### `" + std::string(e.id) + "`"), std::string::npos)
        << e.id << " not in docs/findings.md";
}

TEST(Catalog, UnknownIdIsABug) {
  EXPECT_THROW(make_finding("nonexistent"), std::logic_error);
}

}  // namespace cudoctor::rules
