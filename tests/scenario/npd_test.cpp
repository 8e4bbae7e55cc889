// `--format npd`: node-problem-detector's custom-plugin contract (exit 0 OK, 1 NonOK, 2
// Unknown; stdout, cut to max_output_length bytes, is the condition's message), and the plugin
// monitor configuration shipped in deploy/npd run as NPD would run it.
#include "cudoctor/render/npd.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fixture_root.hpp"
#include "fleet_reports.hpp"
#include "machines.hpp"
#include "run_cli.hpp"

namespace cudoctor::testing {
namespace {

std::string line_of(snapshot::Snapshot s) {
  return render::npd_line(report::build(std::move(s), kb::builtin()));
}

TEST(Npd, OneLineNamesTheBreakOrSaysOk) {
  EXPECT_EQ(line_of(h200_node("gpu-001", 1)), "ok: the GPU stack works\n");
  EXPECT_EQ(line_of(with_baked_libcuda(h200_node("gpu-042", 42))),
            "Kernel module 580.159.04 but user-space driver 570.124.06\n")
      << "82 bytes with its id: the title alone fits";
  // Longer than 80 bytes: cut with "...", ASCII only, and never two lines.
  const auto long_line = line_of(with_torch_lacking_cublas(h200_node("gpu-180", 180)));
  EXPECT_EQ(long_line.size(), render::k_npd_max_output + 1) << long_line;
  EXPECT_TRUE(long_line.starts_with("framework-library-missing: PyTorch 2.11.0+cu130")) << long_line;
  EXPECT_TRUE(long_line.ends_with("...\n")) << long_line;
  auto odd = with_baked_libcuda(h200_node("gpu-043", 43));
  odd.gpus[0].nvml->name = "NVIDIA H200 ✓\nsecond line";
  for (const auto& l : {line_of(odd), long_line}) {
    EXPECT_EQ(l.find('\n'), l.size() - 1) << l;
    for (const unsigned char c : l) EXPECT_LT(c, 0x80) << l;
  }
}

TEST(Npd, ThePluginMonitorConfigRunsAsNpdRunsIt) {
  // data/ is beside deploy/ in the source tree.
  std::ifstream in(std::string(CUDOCTOR_DATA_DIR) + "/../deploy/npd/cudoctor-plugin-monitor.json");
  ASSERT_TRUE(in) << "deploy/npd/cudoctor-plugin-monitor.json";
  const auto config = nlohmann::json::parse(in);
  EXPECT_EQ(config["plugin"], "custom");
  EXPECT_EQ(config["pluginConfig"]["max_output_length"], 80);
  ASSERT_EQ(config["rules"].size(), 1u);
  const auto& rule = config["rules"][0];
  EXPECT_EQ(rule["type"], "permanent");
  EXPECT_EQ(rule["condition"], config["conditions"][0]["type"]);
  EXPECT_EQ(rule["path"], "/usr/bin/cudoctor") << "where the .deb installs it";
  // The rule's own arguments, on a machine whose module Secure Boot blocks.
  FixtureRoot root;
  build_secure_boot_blocks_dkms(root);
  auto args = rule["args"].get<std::vector<std::string>>();
  args.insert(args.end(), {"--root", root.path().string()});
  const auto r = run_cudoctor(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "Secure Boot is on and the nvidia module is not loaded\n");
  EXPECT_LE(r.out.size(), 81u) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  const auto unusable = run_cudoctor({"--format", "npd", "--root", root.path().string() + "/no-such-dir"});
  EXPECT_EQ(unusable.exit_code, 2) << "Unknown to NPD: " << unusable.out << unusable.err;
  const auto plan = run_cudoctor({"plan", "--format", "npd"});
  EXPECT_EQ(plan.exit_code, 2);
  EXPECT_NE(plan.err.find("cudoctor plan: --format npd belongs to check"), std::string::npos) << plan.err;
}

}  // namespace
}  // namespace cudoctor::testing
