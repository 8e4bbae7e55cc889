// --redact in every format and subcommand: user names, homes and host names never appear.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

// Occurrences of word not inside a longer ASCII word ("malice" does not count for "alice").
std::size_t leaks(const std::string& out, const std::string& word) {
  std::size_t n = 0;
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (auto p = out.find(word); p != std::string::npos; p = out.find(word, p + 1))
    n += (p == 0 || !alnum(out[p - 1])) && (p + word.size() == out.size() || !alnum(out[p + word.size()]));
  return n;
}

// Occurrences of host as a whole token: not a piece of a path or of a longer name.
std::size_t host_tokens(const std::string& out, const std::string& host) {
  std::size_t n = 0;
  const auto part = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '-' || c == '_';
  };
  for (auto p = out.find(host); p != std::string::npos; p = out.find(host, p + 1)) {
    const auto e = p + host.size();
    const bool left = p == 0 || (!part(out[p - 1]) && out[p - 1] != '.' && out[p - 1] != '~');
    const bool right = e == out.size() || (!part(out[e]) && !(out[e] == '.' && e + 1 < out.size() && part(out[e + 1])));
    n += left && right;
  }
  return n;
}

// gpu-node-17 with alice (home outside /home) and bob; a toolkit in a conda environment
// named after alice, and an ELF file under her home.
void build(FixtureRoot& r) {
  add_kvm_guest_without_gpu(r, "gpu-node-17");
  r.file("/etc/hosts", "127.0.0.1 localhost\n10.0.0.17 gpu-node-17.cluster.example.org gpu-node-17\n");
  r.file("/etc/passwd",
         "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/srv/u/alice:/bin/bash\nbob:x:1001:1001::/home/bob:/bin/"
         "bash\n");
  r.file("/opt/conda/envs/train-alice/conda-meta/cuda-toolkit-12.4.1-0.json", "{}\n");
  r.file("/opt/conda/envs/train-alice/lib/libcudart.so.12.4.127", "");
  r.copy("/srv/u/alice/bin/tool", "/bin/true");
}

std::map<std::string, std::string> alice_env(const std::string& user) {
  return {{"HOME", "/srv/u/alice"},
          {"USER", user},
          {"LOGNAME", user},
          {"SUDO_USER", "alice"},
          {"VIRTUAL_ENV", "/srv/u/alice/venvs/alice-env"},
          {"PATH", "/srv/gpu-node-17.local/cuda-12.4/bin:/scratch/alice-env/bin:/opt/malice/bin:/usr/bin:/bin"},
          {"LD_LIBRARY_PATH", "/home/bob/lib:/srv/u/alice/lib:/data/alice_x/lib"}};
}

void expect_redacted(const std::string& what, const CliResult& run) {
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << what << ": " << run.err;
  EXPECT_NE(run.out, "") << what;
  EXPECT_EQ(leaks(run.out, "alice"), 0u) << what << ":\n" << run.out;
  EXPECT_EQ(leaks(run.out, "bob"), 0u) << what << ":\n" << run.out;
  // The host name as a token (the report's header, the hostname field) never shows; inside a
  // path it stays, so that a host called "local" leaves /usr/local alone.
  EXPECT_EQ(host_tokens(run.out, "gpu-node-17"), 0u) << what << ":\n" << run.out;
  EXPECT_FALSE(contains(run.out, "/srv/u/")) << what << ":\n" << run.out;
}

void check_everything(const FixtureRoot& r, const std::map<std::string, std::string>& env,
                      const std::vector<std::string>& prefix) {
  const auto root = r.path().string();
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"text", {}},
      {"text -v", {"-v"}},
      {"json", {"--json"}},
      {"markdown -v", {"--format", "markdown", "-v"}},
      {"toolkits", {"toolkits"}},
      {"toolkits --json", {"toolkits", "--json"}},
      {"ldd", {"ldd", "/srv/u/alice/bin/tool"}},
      {"ldd --why", {"ldd", "/srv/u/alice/bin/tool", "--why", "libc.so.6"}},
      {"ldd --json", {"ldd", "--json", "/srv/u/alice/bin/tool"}},
      {"archs", {"archs", "/srv/u/alice/bin/tool"}},
      {"archs --json", {"archs", "--json", "/srv/u/alice/bin/tool"}},
      {"plan", {"plan", "--gpu", "RTX 4090"}},
      {"kb", {"kb", "gpu", "RTX 4090"}},
  };
  for (const auto& [what, args] : runs) {
    std::vector<std::string> full = {"--root", root, "--redact", "--color", "never", "--no-runtime"};
    full.insert(full.end(), args.begin(), args.end());
    expect_redacted(what, run_cudoctor(full, env, prefix));
  }
  const auto json = nlohmann::json::parse(run_cudoctor({"--root", root, "--redact", "--json"}, env, prefix).out);
  EXPECT_EQ(json["host"]["hostname"], "<host>");
  std::string path;
  for (const auto& p : json["toolkit"]["path"]) path += p.get<std::string>() + ":";
  EXPECT_EQ(path, "/srv/gpu-node-17.local/cuda-12.4/bin:/scratch/<user>-env/bin:/opt/malice/bin:/usr/bin:/bin:")
      << "the raw PATH: the host name inside a path is a piece of the path";
  std::string llp;
  for (const auto& p : json["toolkit"]["ld_library_path"]) llp += p.get<std::string>() + ":";
  EXPECT_EQ(llp, "<home>/lib:<home>/lib:/data/<user>_x/lib:");
  const auto toolkits = run_cudoctor({"--root", root, "--redact", "toolkits"}, env, prefix).out;
  EXPECT_TRUE(contains(toolkits, root + "/opt/conda/envs/train-<user>") ||
              contains(toolkits, "/opt/conda/envs/train-<user>"))
      << toolkits;
  EXPECT_TRUE(contains(run_cudoctor({"--root", root, "--redact", "ldd", "/srv/u/alice/bin/tool"}, env, prefix).out,
                       "<home>/bin/tool\n"));
}

TEST(ScenarioRedact, RootWithAUsersEnvironment) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs as root, as sudo -E does";
  FixtureRoot r;
  build(r);
  check_everything(r, alice_env("root"), {});
}

TEST(ScenarioRedact, AUserWhoseHomeIsOutsideHome) {
  if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "needs setpriv (util-linux)";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to an unprivileged user";
  FixtureRoot r;
  build(r);
  auto env = alice_env("alice");
  env.erase("SUDO_USER");
  check_everything(r, env, {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
}

TEST(ScenarioRedact, WithoutTheFlagNothingIsHidden) {
  FixtureRoot r;
  build(r);
  const auto out = run_cudoctor({"--root", r.path().string(), "--json"}, alice_env("root")).out;
  EXPECT_TRUE(contains(out, "\"hostname\": \"gpu-node-17\""));
  EXPECT_TRUE(contains(out, "/scratch/alice-env/bin"));
  EXPECT_FALSE(contains(out, "private_homes")) << "the accounts of the machine are not part of a report";
}

}  // namespace
}  // namespace cudoctor::testing
