#include "cudoctor/rules/catalog.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace cudoctor::rules {
namespace {

struct DocSection {
  std::string layer;     // "L1", from the "## L1 driver" heading above it
  std::string severity;  // the first word of its text: "error."
};

// Every "### `id`" of docs/findings.md with its layer heading and the severity its text opens with.
std::map<std::string, DocSection> documented() {
  std::ifstream in(std::string(CUDOCTOR_DATA_DIR) + "/../docs/findings.md");
  EXPECT_TRUE(in) << "docs/findings.md is missing";
  std::map<std::string, DocSection> out;
  const std::regex layer_heading(R"(^## (L[0-5]) )"), id_heading(R"(^### `([a-z0-9-]+)`\s*$)"),
      severity(R"(^(ok|info|warn|error)\.)");
  std::string line, layer, pending;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, layer_heading)) {
      layer = m[1];
    } else if (std::regex_search(line, m, id_heading)) {
      EXPECT_FALSE(out.count(m[1])) << m[1] << " is documented twice";
      pending = m[1];
      out[pending].layer = layer;
    } else if (!pending.empty()) {
      out[pending].severity = std::regex_search(line, m, severity) ? std::string(m[1]) : "(" + line + ")";
      pending.clear();
    }
  }
  return out;
}

TEST(Catalog, IdsAreUniqueKebabCase) {
  std::set<std::string_view> seen;
  for (const auto& e : catalog()) {
    EXPECT_TRUE(seen.insert(e.id).second) << e.id;
    for (const char c : e.id) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << e.id;
  }
}

TEST(Catalog, EveryIdIsDocumentedInItsLayerWithItsSeverity) {
  const auto docs = documented();
  for (const auto& e : catalog()) {
    const auto it = docs.find(std::string(e.id));
    if (it == docs.end()) {
      ADD_FAILURE() << e.id << " is not in docs/findings.md";
      continue;
    }
    EXPECT_EQ(it->second.layer, to_string(e.layer)) << e.id << " is documented under another layer";
    EXPECT_EQ(it->second.severity, to_string(e.severity)) << e.id << ": the docs open with another severity";
  }
}

TEST(Catalog, EveryDocumentedIdIsInTheCatalog) {
  for (const auto& [id, section] : documented()) EXPECT_NE(find_entry(id), nullptr) << id << " is documented only";
}

TEST(Catalog, MakeFindingTakesEverythingFromTheRow) {
  const auto f = make_finding("nvidia-module-not-loaded");
  EXPECT_EQ(f.id, "nvidia-module-not-loaded");
  EXPECT_EQ(f.layer, Layer::L1);
  EXPECT_EQ(f.severity, Severity::error);
  EXPECT_EQ(f.title, "The nvidia kernel module is not loaded");
  EXPECT_EQ(docs_anchor(f.id), "docs/findings.md#nvidia-module-not-loaded");
}

TEST(Catalog, AnIdReadAtRunTimeMayBeUnknown) {
  EXPECT_EQ(find_entry(std::string("nvml-") + "eror"), nullptr);  // misspelt, built at run time
  ASSERT_NE(find_entry("nvml-error"), nullptr);
  EXPECT_EQ(find_entry("nvml-error")->layer, Layer::L1);
}

TEST(Catalog, ProblemsSayWhatToDoNext) {
  for (const auto& e : catalog()) {
    if (e.severity == Severity::error || e.severity == Severity::warn) {
      EXPECT_FALSE(e.next.empty()) << e.id << " has no next step";
    }
  }
}

}  // namespace
}  // namespace cudoctor::rules
