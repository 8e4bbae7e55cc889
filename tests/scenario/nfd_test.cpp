// `--format nfd`: node-feature-discovery's local feature file (one `<namespace>/<name>=<value>`
// per line, `# +expiry-time=` before them), every label checked by the real kubectl as the API
// server would check it, and the file written as NFD needs it: a dot-file renamed into place.
#include "cudoctor/render/nfd.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixture_root.hpp"
#include "fleet_reports.hpp"
#include "machines.hpp"
#include "run_cli.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

std::string labels_of(snapshot::Snapshot s, const std::string& ns = std::string(render::k_nfd_default_namespace)) {
  render::NfdOptions o;
  o.label_namespace = ns;
  o.tool_version = "0.test";
  o.expires = "2026-12-03T15:10:00Z";
  return render::nfd_labels(report::build(std::move(s), kb::builtin()), o);
}

// The label lines (comments left out), in order.
std::vector<std::string> label_lines(const std::string& file) {
  std::vector<std::string> out;
  std::istringstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

// kubectl's own label validation, offline: `kubectl label --local` on a Node manifest checks
// each key and value as the API server does and prints the labels it would set.
// Its output, then " rc=N".
std::string kubectl_label(const std::vector<std::string>& labels) {
  const auto node = fs::path(::testing::TempDir()) / ("nfd-node-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(node) << "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-042\n";
  std::string cmd = "timeout 60 kubectl label --local -f " + node.string() + " -o jsonpath='{.metadata.labels}'";
  for (const auto& l : labels) cmd += " '" + l + "'";
  return shell_output(cmd + " 2>&1; echo \" rc=$?\"");
}

TEST(Nfd, LabelsSayWhetherTheStackWorksAndWhatItIsBuiltOf) {
  const auto healthy = labels_of(h200_node("gpu-001", 1));
  EXPECT_TRUE(
      healthy.starts_with("# cudoctor 0.test check: labels for node-feature-discovery's local source\n"
                          "# +expiry-time=2026-12-03T15:10:00Z\n"))
      << healthy;
  const auto h = label_lines(healthy);
  const std::string ns = "cudoctor.feature.node.kubernetes.io/";
  EXPECT_EQ(h, (std::vector<std::string>{ns + "ok=true", ns + "broken-layer=none", ns + "errors=0", ns + "warnings=0",
                                         ns + "driver=580.159.04", ns + "cuda-driver=13.0", ns + "torch-cuda=13.0",
                                         ns + "jax-cuda=13", ns + "cupy-cuda=13x"}))
      << healthy;

  const auto broken = label_lines(labels_of(with_baked_libcuda(h200_node("gpu-042", 42)), "gpu.example.com"));
  EXPECT_EQ(broken[0], "gpu.example.com/ok=false");
  EXPECT_EQ(broken[1], "gpu.example.com/broken-layer=L1");
  EXPECT_EQ(broken[2], "gpu.example.com/break=driver-version-mismatch");
  EXPECT_NE(std::find(broken.begin(), broken.end(), "gpu.example.com/problem.driver-version-mismatch=error"),
            broken.end());
}

TEST(Nfd, ValuesAreValidLabelValuesAndNamespacesNfdAccepts) {
  EXPECT_EQ(render::nfd_label_value("2.5.1+cu124"), "2.5.1_cu124");
  EXPECT_EQ(render::nfd_label_value("-x-"), "x");
  EXPECT_EQ(render::nfd_label_value("+++"), "");
  EXPECT_EQ(render::nfd_label_value(std::string(80, 'a')).size(), 63u);
  EXPECT_EQ(render::nfd_namespace_problem("cudoctor.feature.node.kubernetes.io"), "");
  EXPECT_EQ(render::nfd_namespace_problem("gpu.example.com"), "");
  EXPECT_TRUE(render::nfd_namespace_problem("node.kubernetes.io").starts_with("nfd-master always denies"));
  EXPECT_FALSE(render::nfd_namespace_problem("Upper.Case").empty());
  EXPECT_FALSE(render::nfd_namespace_problem("a..b").empty());

  // A framework whose CUDA is odd text, and a problem id that is long: still valid labels.
  auto s = with_torch_lacking_cublas(h200_node("gpu-180", 180));
  s.python.envs[0].frameworks[0].cuda = "13.0+weird/β";
  const auto lines = label_lines(labels_of(std::move(s)));
  const auto k = kubectl_label(lines);
  ASSERT_TRUE(k.ends_with(" rc=0\n")) << k;
  for (const auto& l : lines) {
    const auto eq = l.find('=');
    EXPECT_TRUE(contains(k, "\"" + l.substr(0, eq) + "\":\"" + l.substr(eq + 1) + "\"")) << l << "\n" << k;
  }
  EXPECT_TRUE(contains(k, "\"cudoctor.feature.node.kubernetes.io/torch-cuda\":\"13.0_weird\"")) << k;
  // The check itself: kubectl refuses what a careless writer would print.
  EXPECT_TRUE(kubectl_label({"cudoctor.feature.node.kubernetes.io/torch-version=2.5.1+cu124"}).ends_with(" rc=1\n"));
}

TEST(Nfd, TheFeatureFileIsWrittenWholeWithItsExpiry) {
  FixtureRoot root;
  build_secure_boot_blocks_dkms(root);
  const auto dir = fs::path(::testing::TempDir()) / ("features.d-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto file = dir / "cudoctor";
  // SOURCE_DATE_EPOCH stands for now: 2026-12-03 15:00:00 UTC.
  const auto r = run_cudoctor(
      {"check", "--format", "nfd", "--nfd-expiry", "900", "--root", root.path().string(), "-o", file.string()},
      {{"SOURCE_DATE_EPOCH", "1796310000"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(contains(text, "\n# +expiry-time=2026-12-03T15:15:00Z\n")) << text;
  const auto lines = label_lines(text);
  ASSERT_GE(lines.size(), 3u) << text;
  EXPECT_EQ(lines[0], "cudoctor.feature.node.kubernetes.io/ok=false");
  EXPECT_EQ(lines[2], "cudoctor.feature.node.kubernetes.io/break=module-blocked-by-secure-boot");
  EXPECT_TRUE(kubectl_label(lines).ends_with(" rc=0\n"));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"cudoctor"}) << "no temporary file left; NFD skips dot-files meanwhile";

  // --nfd-expiry 0: no directive, labels until the file changes.
  const auto forever = run_cudoctor({"check", "--format", "nfd", "--nfd-expiry", "0", "--root", root.path().string()});
  EXPECT_FALSE(contains(forever.out, "expiry-time")) << forever.out;

  const auto denied = run_cudoctor({"check", "--format", "nfd", "--nfd-namespace", "node.kubernetes.io"});
  EXPECT_EQ(denied.exit_code, 2);
  EXPECT_TRUE(contains(denied.err, "'node.kubernetes.io': nfd-master always denies kubernetes.io")) << denied.err;
  const auto stray = run_cudoctor({"check", "--json", "--nfd-expiry", "60", "--root", root.path().string()});
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_TRUE(contains(stray.err, "--nfd-expiry goes with check --format nfd")) << stray.err;
  const auto plan = run_cudoctor({"plan", "--format", "nfd"});
  EXPECT_EQ(plan.exit_code, 2);
  EXPECT_TRUE(contains(plan.err, "cudoctor plan: --format nfd belongs to check")) << plan.err;
}

}  // namespace
}  // namespace cudoctor::testing
