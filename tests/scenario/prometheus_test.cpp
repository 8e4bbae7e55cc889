// `--format prometheus` as node_exporter's textfile collector reads it, checked by the real
// Prometheus linter (Debian's promtool): the real H200 report healthy and broken, label values
// that need escaping, and the file written beside its destination and renamed over it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cudoctor/util/strings.hpp"
#include "fixture_root.hpp"
#include "fleet_reports.hpp"
#include "run_cli.hpp"

namespace cudoctor::testing {
namespace {

#define REQUIRE_PROMTOOL()                                                   \
  if (shell_output("command -v promtool").empty())                           \
  GTEST_SKIP() << "promtool is not installed (Debian's prometheus package; " \
                  "scripts/install-deps.sh --test installs it)"

std::string exposition(snapshot::Snapshot s) {
  const auto rep = report::build(std::move(s), kb::builtin());
  render::Options o;
  o.tool_version = "0.1.0";
  o.run_seconds = 1.25;
  return render::prometheus(rep, o);
}

// promtool's verdict on a file: "" when it passes, else what it printed.
std::string promtool_check(const std::string& text) {
  FixtureRoot dir;
  dir.file("/m.prom", text);
  const auto out = shell_output("promtool check metrics < '" + dir.host("/m.prom").string() + "' 2>&1; echo rc=$?");
  return out == "rc=0\n" ? "" : out;
}

TEST(Prometheus, TheHealthyH200PassesPromtoolWithItsGpuSeries) {
  REQUIRE_PROMTOOL();
  const auto text = exposition(h200_node("gpu-007", 7));
  EXPECT_EQ(promtool_check(text), "");
  const std::string gpu = R"(gpu="0",UUID="GPU-100007-b844-0e99-c9cf-e90c0ed5f21b",pci_bus_id="0000:00:06.0")";
  for (const auto& line :
       {std::string("cudoctor_up 1\n"), std::string("cudoctor_healthy 1\n"), std::string("cudoctor_broken_layer -1\n"),
        std::string("cudoctor_run_duration_seconds 1.25\n"),
        "cudoctor_gpu_info{" + gpu + R"(,name="NVIDIA H200",compute_capability="9.0"} 1)" + "\n",
        "cudoctor_gpu_pcie_link_generation{" + gpu + R"(,kind="current"} 5)" + "\n",
        "cudoctor_gpu_pcie_link_width{" + gpu + R"(,kind="max"} 16)" + "\n",
        "cudoctor_gpu_power_limit_watts{" + gpu + R"(,kind="current"} 700)" + "\n",
        std::string(R"(cudoctor_problems{severity="error"} 0)") + "\n",
        std::string(R"(cudoctor_info{version="0.1.0",knowledge_base=")")})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  EXPECT_EQ(text.find("cudoctor_finding{"), std::string::npos) << text;
  // The textfile collector refuses timestamps: no sample carries a third field.
  for (const auto l : util::lines(text)) {
    if (l.empty() || l[0] == '#') continue;
    const auto brace = l.rfind('}');
    const auto after = brace == std::string_view::npos ? l.substr(l.find(' ')) : l.substr(brace + 1);
    EXPECT_EQ(util::split_ws(after).size(), 1u) << l;
  }
}

TEST(Prometheus, ABrokenNodeNamesItsBreak) {
  REQUIRE_PROMTOOL();
  const auto text = exposition(with_baked_libcuda(h200_node("gpu-042", 42)));
  EXPECT_EQ(promtool_check(text), "");
  EXPECT_NE(text.find("cudoctor_healthy 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("cudoctor_broken_layer 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(cudoctor_finding{id="driver-version-mismatch",severity="error",layer="L1",break="true"} 1)"),
            std::string::npos)
      << text;
}

TEST(Prometheus, LabelValuesAreEscaped) {
  REQUIRE_PROMTOOL();
  auto s = h200_node("gpu-001", 1);
  s.gpus[0].nvml->name = "NVIDIA \"H200\" \\ test\nsecond line";
  const auto text = exposition(std::move(s));
  EXPECT_EQ(promtool_check(text), "");
  EXPECT_NE(text.find(R"(name="NVIDIA \"H200\" \\ test\nsecond line")"), std::string::npos) << text;
}

TEST(Prometheus, OutputFileIsRenamedIntoPlaceAndOnlyCheckSpeaksIt) {
  REQUIRE_PROMTOOL();
  FixtureRoot dir;
  dir.dir("/textfile");
  const auto target = dir.host("/textfile/cudoctor.prom").string();
  const auto r = run_cudoctor({"--no-runtime", "--format", "prometheus", "--output", target});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.host("/textfile"))) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"cudoctor.prom"}) << "no temporary file left beside it";
  std::ifstream in(target);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(promtool_check(text), "");
  EXPECT_NE(text.find("cudoctor_up 1\n"), std::string::npos) << text;

  const auto missing = run_cudoctor({"--no-runtime", "--format", "prometheus", "--output", target + ".d/x.prom"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot write " + target + ".d/x.prom: No such file or directory"), std::string::npos)
      << missing.err;
  const auto plan = run_cudoctor({"plan", "--format", "prometheus"});
  EXPECT_EQ(plan.exit_code, 2);
  EXPECT_NE(plan.err.find("cudoctor plan: --format prometheus belongs to check"), std::string::npos) << plan.err;
}

}  // namespace
}  // namespace cudoctor::testing
