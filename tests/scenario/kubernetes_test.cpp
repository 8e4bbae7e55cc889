// deploy/kubernetes's manifests checked by the real kubectl, offline: tests/kubernetes/dry-run.sh
// runs `kubectl apply --dry-run=client --validate=strict -o json` against a stub API server that
// serves Kubernetes 1.32's own OpenAPI definitions (tests/kubernetes/openapi/SOURCE.md), so kubectl
// refuses an unknown field, a wrong type or a missing required field as it would before sending
// the objects to a cluster; and the objects it would send say what the manifests' comments and
// docs promise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

// data/ is beside deploy/ and tests/ in the source tree.
fs::path source_dir() {
  return fs::path(CUDOCTOR_DATA_DIR).parent_path();
}
fs::path manifest(const std::string& name) {
  return source_dir() / "deploy" / "kubernetes" / name;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool have(const std::string& program) {
  return shell_output("command -v " + program + " >/dev/null 2>&1 && echo yes") == "yes\n";
}

// Why these tests cannot run here ("" when they can).
std::string missing_tool() {
  if (!have("kubectl")) return "kubectl is not installed";
  if (!have("python3")) return "python3 (for the stub API server) is not installed";
  return "";
}

struct DryRun {
  int exit_code = -1;
  std::string out;  // kubectl's standard output: the objects, as JSON
  std::string err;  // kubectl's standard error: its messages
};

DryRun dry_run(const std::vector<fs::path>& files) {
  const auto err_file = fs::path(::testing::TempDir()) / ("kubernetes-dry-run-" + std::to_string(::getpid()) + ".err");
  std::string cmd = "timeout 90 " + quoted((source_dir() / "tests" / "kubernetes" / "dry-run.sh").string());
  for (const auto& f : files) cmd += " " + quoted(f.string());
  auto out = shell_output(cmd + " 2>" + quoted(err_file.string()) + "; echo \"rc=$?\"");
  DryRun r;
  if (const auto at = out.rfind("rc="); at != std::string::npos) {
    r.exit_code = std::stoi(out.substr(at + 3));
    out.resize(at);
  }
  r.out = out;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(err_file);
  return r;
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The element of a JSON array whose `key` is `value` (null when none is).
nlohmann::json with(const nlohmann::json& array, const std::string& key, const std::string& value) {
  for (const auto& e : array)
    if (e.contains(key) && e[key] == value) return e;
  return nullptr;
}

// The number of times needle occurs in haystack.
size_t occurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

TEST(ScenarioKubernetes, TheManifestsPassKubectlsValidationAndSayWhatTheDocsSay) {
  if (const auto why = missing_tool(); !why.empty()) GTEST_SKIP() << why;
  const auto r = dry_run({manifest("namespace.yaml"), manifest("daemonset.yaml"), manifest("job.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto list = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(list.is_discarded()) << r.out;
  ASSERT_EQ(list["kind"], "List") << r.out;
  auto& items = list["items"];
  ASSERT_EQ(items.size(), 3u) << r.out;
  // Copies, not const: a key a manifest lost reads as null and fails the check that wants it.
  auto ns = with(items, "kind", "Namespace");
  auto ds = with(items, "kind", "DaemonSet");
  auto job = with(items, "kind", "Job");
  ASSERT_FALSE(ns.is_null() || ds.is_null() || job.is_null()) << r.out;
  EXPECT_EQ(ns["metadata"]["name"], "cudoctor");
  EXPECT_EQ(ds["metadata"]["namespace"], "cudoctor");
  EXPECT_EQ(job["metadata"]["namespace"], "cudoctor");

  // The DaemonSet: NVML through the NVIDIA runtime, the host read-only at /host, not privileged,
  // and the loop writes both files into the directories node_exporter and NFD read.
  auto& pod = ds["spec"]["template"]["spec"];
  EXPECT_EQ(pod["runtimeClassName"], "nvidia");
  ASSERT_EQ(pod["containers"].size(), 1u);
  auto& c = pod["containers"][0];
  auto caps = with(c["env"], "name", "NVIDIA_DRIVER_CAPABILITIES");
  ASSERT_FALSE(caps.is_null()) << c["env"].dump();
  EXPECT_EQ(caps["value"], "compute,utility");
  EXPECT_EQ(c["securityContext"]["privileged"], false);
  EXPECT_EQ(c["securityContext"]["allowPrivilegeEscalation"], false);
  // The directory each volume mount shows, by mount path.
  const auto host_dir = [&](const std::string& mount_path) -> nlohmann::json {
    auto m = with(c["volumeMounts"], "mountPath", mount_path);
    if (m.is_null() || !m["name"].is_string()) return nullptr;
    auto v = with(pod["volumes"], "name", m["name"].get<std::string>());
    return v.is_null() ? nullptr : v["hostPath"]["path"];
  };
  EXPECT_EQ(host_dir("/host"), "/");
  EXPECT_EQ(with(c["volumeMounts"], "mountPath", "/host")["readOnly"], true);
  EXPECT_EQ(host_dir("/textfile"), "/var/lib/node_exporter/textfile_collector");
  EXPECT_EQ(host_dir("/features.d"), "/etc/kubernetes/node-feature-discovery/features.d");
  std::string loop;
  for (const auto& part : c["command"]) loop += part.get<std::string>() + " ";
  for (const auto& part : c["args"]) loop += part.get<std::string>() + " ";
  EXPECT_EQ(occurrences(loop, "cudoctor check $where --passive "), 2u)
      << "no CUDA context on GPUs the workloads own: " << loop;
  EXPECT_TRUE(contains(loop, "[ -e \"$f\" ] && where=\"--root /host --runtime\"")) << "the host's NVML: " << loop;
  EXPECT_EQ(with(c["volumeMounts"], "mountPath", "/host")["recursiveReadOnly"], "Enabled")
      << "the host's /proc and /sys read-only too";
  EXPECT_EQ(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "privileged") << "hostPath needs it";
  EXPECT_TRUE(contains(loop, "--format prometheus --output /textfile/cudoctor.prom")) << loop;
  EXPECT_TRUE(contains(loop, "--format nfd ")) << loop;
  EXPECT_TRUE(contains(loop, "--output /features.d/cudoctor")) << loop;

  // The Job: one GPU, the way a workload asks for it, and the report as JSON in the log.
  auto& jc = job["spec"]["template"]["spec"]["containers"][0];
  // As written (1): a client-side dry run prints the manifest's value; the API server would
  // store the Quantity "1".
  auto& gpus = jc["resources"]["limits"]["nvidia.com/gpu"];
  EXPECT_TRUE(gpus == 1 || gpus == "1") << jc["resources"].dump();
  std::string command;
  for (const auto& part : jc["command"]) command += part.get<std::string>() + " ";
  EXPECT_TRUE(command.starts_with("cudoctor check --json ")) << command;
  EXPECT_EQ(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(job["spec"]["template"]["spec"]["runtimeClassName"], "nvidia");
}

TEST(ScenarioKubernetes, KubectlRefusesAManifestWithAnUnknownFieldOrAWrongType) {
  if (const auto why = missing_tool(); !why.empty()) GTEST_SKIP() << why;
  const auto dir = fs::path(::testing::TempDir()) / ("kubernetes-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Each: the manifest, what to change in it, and what kubectl must say.
  const struct {
    std::string file, from, to, message;
  } broken[] = {
      {"daemonset.yaml", "\n          image: cudoctor:", "\n          imagee: cudoctor:",
       "ValidationError(DaemonSet.spec.template.spec.containers[0]): unknown field \"imagee\" in "
       "io.k8s.api.core.v1.Container"},
      {"job.yaml", "\n  backoffLimit: 0\n", "\n  backoffLimit: \"zero\"\n",
       "ValidationError(Job.spec.backoffLimit): invalid type for io.k8s.api.batch.v1.JobSpec.backoffLimit: got "
       "\"string\", expected \"integer\""},
  };
  for (const auto& b : broken) {
    auto text = file_text(manifest(b.file));
    const auto at = text.find(b.from);
    ASSERT_NE(at, std::string::npos) << b.file << " no longer has " << b.from;
    text.replace(at, b.from.size(), b.to);
    const auto copy = dir / b.file;
    std::ofstream(copy) << text;
    const auto r = dry_run({copy});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "") << "kubectl prints no object when one is invalid";
    EXPECT_TRUE(contains(r.err, "error validating \"" + copy.string() + "\"")) << r.err;
    EXPECT_TRUE(contains(r.err, b.message)) << r.err;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cudoctor::testing
