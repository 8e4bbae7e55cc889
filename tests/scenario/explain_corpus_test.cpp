// The explain corpus: verbatim logs from public issue threads (tests/explain/corpus/<family>/),
// each with its thread's URL and the cause the thread confirmed beside it (#=EXPECT=#), in the
// manner of pytorch/test-infra's log-classifier fixtures. Every log must get its cause first.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cudoctor/explain/explain.hpp"
#include "cudoctor/kb/kb.hpp"

namespace cudoctor::explain {
namespace {

namespace fs = std::filesystem;

struct CorpusLog {
  fs::path path;
  std::string source, confirmed, expect, body;
};

std::vector<CorpusLog> corpus() {
  std::vector<CorpusLog> out;
  const fs::path dir = fs::path(CUDOCTOR_DATA_DIR) / "../tests/explain/corpus";
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".log") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    CorpusLog log{e.path(), "", "", "", ""};
    std::string line;
    std::istringstream lines(all.str());
    std::size_t body_at = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("#=", 0) != 0) break;
      body_at += line.size() + 1;
      const auto tag = line.substr(0, line.find("=#") + 2);
      const auto value = line.size() > tag.size() ? line.substr(tag.size() + 1) : "";
      if (tag == "#=SOURCE=#") log.source = value;
      if (tag == "#=CONFIRMED=#") log.confirmed = value;
      if (tag == "#=EXPECT=#") log.expect = value;
    }
    log.body = all.str().substr(std::min(body_at, all.str().size()));
    out.push_back(std::move(log));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

Explanation explain_text(const std::string& text) {
  const auto& lib = builtin_library();
  auto matcher = Matcher::compile(lib);
  EXPECT_TRUE(matcher) << (matcher ? "" : matcher.error());
  Reading r;
  LogReader reader([&](const Line& l) { matcher->scan(l, r); });
  reader.feed(text);
  reader.finish();
  r.stats = reader.stats();
  return explain(std::move(r), lib, kb::builtin(), nullptr);
}

TEST(ScenarioExplainCorpus, EveryLogGetsTheCauseItsThreadConfirmedFirst) {
  const auto logs = corpus();
  std::map<std::string, int> per_family;
  int right = 0;
  for (const auto& log : logs) {
    const auto where = log.path.parent_path().filename().string() + "/" + log.path.filename().string();
    EXPECT_EQ(log.source.rfind("https://", 0), 0u) << where << ": #=SOURCE=# must be the thread's URL";
    EXPECT_FALSE(log.confirmed.empty()) << where << ": #=CONFIRMED=# says who established the cause";
    ASSERT_FALSE(log.expect.empty()) << where << ": #=EXPECT=# is missing";
    ++per_family[log.path.parent_path().filename().string()];
    const auto ex = explain_text(log.body);
    if (ex.causes.empty()) {
      ADD_FAILURE() << where << ": nothing matched; expected " << log.expect;
      continue;
    }
    if (ex.causes.front().id == log.expect) {
      ++right;
      continue;
    }
    std::string got;
    for (const auto& c : ex.causes) got += " " + c.id;
    ADD_FAILURE() << where << ": expected " << log.expect << " first; ranked:" << got << " (from "
                  << ex.causes.front().signatures.front() << ")";
  }
  EXPECT_GE(logs.size(), 120u);
  std::string summary;
  for (const auto& [f, n] : per_family) summary += " " + f + "=" + std::to_string(n);
  std::printf("explain corpus: %d of %zu logs top-1;%s\n", right, logs.size(), summary.c_str());
}

}  // namespace
}  // namespace cudoctor::explain
