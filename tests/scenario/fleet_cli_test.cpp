// `cudoctor diff` and `cudoctor fleet` as a user runs them, on report files written by the real
// rules and renderer (fleet_reports.hpp), with the broken, foreign and hostile files a shared
// directory of 200 nodes' reports really gets.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fixture_root.hpp"
#include "fleet_reports.hpp"
#include "run_cli.hpp"

namespace cudoctor::testing {
namespace {

std::string node(int i) {
  return fmt::format("gpu-{:03}", i);
}

class FleetCli : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 200; ++i) {
      auto s = h200_node(node(i), i);
      if (i == 42) s = with_baked_libcuda(std::move(s));
      if (i == 117) s = with_wrong_gemm(std::move(s));
      if (i == 180) s = with_torch_lacking_cublas(std::move(s));
      const auto text = report_text(std::move(s));
      if (i == 0) m_healthy = text;
      if (i == 42) m_broken = text;
      m_dir.file("/reports/" + node(i) + ".json", text);
    }
    m_dir.file("/reports/gpu-200.json", m_healthy.substr(0, 4000));  // the node died while writing
    m_dir.file("/reports/notes.json", R"({"owner": "ops", "rack": 7})");
    m_dir.file("/reports/README", "not a report, not *.json: not read\n");
    m_dir.fifo("/reports/pipe.json");
  }
  std::string dir() const { return m_dir.host("/reports").string(); }
  std::string file(int i) const { return m_dir.host("/reports/" + node(i) + ".json").string(); }

  FixtureRoot m_dir;
  std::string m_healthy, m_broken;
};

TEST_F(FleetCli, NamesExactlyThePlantedFaultsAndEveryFileItSkipped) {
  const auto r = run_cudoctor({"fleet", dir()}, {{"COLUMNS", "100"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("200 reports: 197 healthy, 3 broken, in 3 configurations; 3 files skipped"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("✗ gpu-042 L1 driver-version-mismatch: Kernel module 580.159.04 but user-space driver"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("✗ gpu-117 L5 gemm-wrong-result: GPU 0: fp16 GEMM is wrong by 0.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("✗ gpu-180 L3 framework-library-missing: PyTorch 2.11.0+cu130"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outlier gpu-117: +gemm-wrong-result"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("     driver.library.libcuda.so.1\n"
                       "       [1]  580.159.04 /usr/local/nvidia/lib64/libcuda.so.580.159.04\n"
                       "       here 570.124.06 /usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("     torch.library.libcublas.so.13\n"), std::string::npos) << r.out;
  // The skipped files by name in the text (wrapped where the temporary path falls), and why in the JSON.
  for (const char* name : {"gpu-200.json", "notes.json", "pipe.json"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  EXPECT_EQ(r.out.find("README"), std::string::npos) << r.out;

  const auto j = run_cudoctor({"fleet", dir(), "--json"});
  const auto doc = nlohmann::json::parse(j.out);
  std::set<std::string> broken;
  for (const auto& n : doc["nodes"])
    if (!n["healthy"].get<bool>())
      broken.insert(n["name"].get<std::string>() + " " + n["break_finding"].get<std::string>());
  EXPECT_EQ(broken, (std::set<std::string>{"gpu-042 driver-version-mismatch", "gpu-117 gemm-wrong-result",
                                           "gpu-180 framework-library-missing"}));
  EXPECT_EQ(doc["reports"], 200);
  std::map<std::string, std::string> skipped;
  for (const auto& k : doc["skipped"])
    skipped[k["file"].get<std::string>().substr(dir().size() + 1)] = k["reason"].get<std::string>();
  EXPECT_EQ(skipped, (std::map<std::string, std::string>{
                         {"gpu-200.json", "truncated: the JSON stops at byte 4000 before the report closes"},
                         {"notes.json",
                          "not a cudoctor report (no schema, verdict and findings: write one with "
                          "cudoctor --json)"},
                         {"pipe.json", "not a regular file"}}));
  EXPECT_EQ(doc["groups"][0]["nodes"].size(), 198u);
}

TEST_F(FleetCli, HealthyFilesAloneExitZeroAndNothingReadableIsAnError) {
  const auto r = run_cudoctor({"fleet", file(0), file(1), file(2)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 reports: 3 healthy, 0 broken, in 1 configuration\n"), std::string::npos) << r.out;
  const auto none = run_cudoctor({"fleet", dir() + "/notes.json", dir() + "/pipe.json"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("cudoctor fleet: no report could be read"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("pipe.json: not a regular file"), std::string::npos) << none.err;
  const auto bare = run_cudoctor({"fleet"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("give report files or a directory of them"), std::string::npos) << bare.err;
  // Other machines' reports: this one does not know their users and homes, so it redacts nothing.
  for (const char* command : {"fleet", "diff"}) {
    const auto red = run_cudoctor({command, file(0), file(1), "--redact"});
    EXPECT_EQ(red.exit_code, 2) << command;
    EXPECT_EQ(red.out, "") << command;
    EXPECT_NE(red.err.find(std::string("cudoctor ") + command +
                           ": --redact does not apply: the reports come from other machines"),
              std::string::npos)
        << red.err;
    EXPECT_NE(red.err.find("(cudoctor check --json --redact)"), std::string::npos) << red.err;
  }
}

TEST_F(FleetCli, DiffOfAHealthyAndABrokenH200PutsTheCauseFirst) {
  const auto r = run_cudoctor({"diff", file(0), file(42)});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto problems = r.out.find("Problems on one side only:\n  ✗ B driver-version-mismatch (L1 error)");
  EXPECT_NE(problems, std::string::npos) << r.out;
  const auto differs = r.out.find(
      "What differs (1; what is behind a problem first):\n"
      "  driver.library.libcuda.so.1 (L1)\n"
      "    A  580.159.04 /usr/local/nvidia/lib64/libcuda.so.580.159.04\n"
      "    B  570.124.06 /usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06\n"
      "       ← behind driver-version-mismatch\n");
  EXPECT_NE(differs, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("temperature_c"), std::string::npos);
  EXPECT_EQ(r.out.find("uuid"), std::string::npos);
  const auto j = nlohmann::json::parse(run_cudoctor({"diff", file(0), file(42), "--json"}).out);
  EXPECT_EQ(j["problems"][0]["id"], "driver-version-mismatch");
  EXPECT_EQ(j["problems"][0]["side"], "b");
  EXPECT_EQ(j["changes"][0]["key"], "driver.library.libcuda.so.1");
  EXPECT_EQ(j["b"]["break_finding"], "driver-version-mismatch");
  const auto md = run_cudoctor({"diff", file(0), file(42), "--format", "markdown"});
  EXPECT_NE(md.out.find("| `driver.library.libcuda.so.1` | L1 |"), std::string::npos) << md.out;
}

TEST_F(FleetCli, DiffOfTwoHealthyNodesIsEmptyAndABadFileIsNamed) {
  const auto same = run_cudoctor({"diff", file(3), file(150)});
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_NE(same.out.find("No fact differs."), std::string::npos) << same.out;
  const auto bad = run_cudoctor({"diff", file(3), dir() + "/gpu-200.json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("gpu-200.json: truncated"), std::string::npos) << bad.err;
  const auto one = run_cudoctor({"diff", file(3)});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("give two reports"), std::string::npos) << one.err;
}

}  // namespace
}  // namespace cudoctor::testing
