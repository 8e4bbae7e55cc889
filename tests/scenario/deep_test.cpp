// check --deep (issue 15): each framework imported in its own interpreter, in a child process
// of its own; what it says and maps beside the static prediction. Run on this machine: Debian's
// CPU-only torch, and venvs whose torch is a small package standing in for a CUDA build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "run_cli.hpp"
#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

bool have_debian_python() {
  return fs::exists("/usr/bin/python3") &&
         shell_output("/usr/bin/python3 -c 'import sys; print(sys.version_info[:2] == (3, 11))'") == "True\n";
}

nlohmann::json check_deep(const std::vector<std::string>& extra, const std::map<std::string, std::string>& env,
                          CliResult* out = nullptr) {
  std::vector<std::string> args = {"check", "--deep", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  // Importing Debian's real torch from a cold page cache on a fresh CI machine has taken over
  // the default 10 s; these tests are about what the import says, so they give it room. The
  // timeout itself is tested with a hanging import and --timeout 2.
  if (std::find(extra.begin(), extra.end(), "--timeout") == extra.end()) {
    args.push_back("--timeout");
    args.push_back("120");
  }
  const auto run = run_cudoctor(args, env);
  if (out) *out = run;
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << run.out << run.err;
    return nlohmann::json::object();
  }
}

std::vector<nlohmann::json> deep_findings(const nlohmann::json& j, const std::string& id, const std::string& in) {
  std::vector<nlohmann::json> out;
  for (const auto& f : j["findings"])
    if (f["id"] == id && contains(f["title"], in)) out.push_back(f);
  return out;
}

// A venv (made by hand as `python3 -m venv` lays it out) whose torch package stands in for a
// CUDA 12.4 build: torch/__init__.py loads torch/lib/libtorch_cuda.so, which needs
// libcudart.so.12 from the bundled nvidia-cuda-runtime wheel (DT_RUNPATH $ORIGIN), and answers
// as torch does on a machine without a GPU. init_body is run first (a crash, a hang).
std::string make_venv(const std::string& name, const std::string& init_body = "") {
  const auto root = fs::path(::testing::TempDir()) / ("deep-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const auto venv = root / "venv";
  const auto site = venv / "lib/python3.11/site-packages";
  fs::create_directories(venv / "bin");
  fs::create_directories(site / "torch/lib");
  fs::create_directories(site / "nvidia/cuda_runtime/lib");
  std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n";
  fs::create_symlink("/usr/bin/python3", venv / "bin/python3");
  std::ofstream(site / "torch/version.py") << "__version__ = '2.5.1+cu124'\ndebug = False\ncuda = '12.4'\nhip = None\n";
  std::ofstream(site / "torch/__init__.py")
      << init_body
      << "import ctypes, os\n"
         "ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib', 'libtorch_cuda.so'))\n"
         "from . import version\n"
         "__version__ = version.__version__\n"
         "class cuda:\n"
         "    @staticmethod\n"
         "    def is_available(): return False\n"
         "    @staticmethod\n"
         "    def device_count(): return 0\n";
  std::ofstream(root / "f.c") << "int f(void) { return 0; }\n";
  run_sh("cc -shared -fPIC " + (root / "f.c").string() + " -Wl,-soname,libcudart.so.12 -o " +
         (site / "nvidia/cuda_runtime/lib/libcudart.so.12").string());
  run_sh("cc -shared -fPIC " + (root / "f.c").string() + " -o " + (site / "torch/lib/libtorch_cuda.so").string() +
         " -Wl,--no-as-needed " + (site / "nvidia/cuda_runtime/lib/libcudart.so.12").string() +
         " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cuda_runtime/lib'");
  return venv.string();
}

std::map<std::string, std::string> activated(const std::string& venv) {
  return {{"VIRTUAL_ENV", venv}, {"PATH", venv + "/bin:/usr/bin:/bin"}};
}

TEST(ScenarioDeep, DebiansCpuOnlyTorchAnswersInItsOwnInterpreter) {
  if (!fs::exists("/usr/lib/python3/dist-packages/torch/version.py") || !have_debian_python())
    GTEST_SKIP() << "python3-torch is not installed (scripts/install-deps.sh --test installs it)";
  const auto j = check_deep({"--python", "/usr/bin/python3"}, {});
  nlohmann::json torch;
  for (const auto& e : j["pythons"])
    for (const auto& f : e["frameworks"])
      if (e["prefix"] == "/usr" && f["name"] == "torch") torch = f;
  ASSERT_FALSE(torch.is_null()) << j["pythons"].dump(1);
  const auto& d = torch["deep"];
  EXPECT_EQ(d["status"], "ok") << d.dump(1);
  EXPECT_TRUE(d["imported"].get<bool>());
  EXPECT_EQ(d["version"], torch["version"]) << "what it says is what its files say";
  EXPECT_EQ(d["cuda"], "");
  EXPECT_EQ(d["available"], 0);
  bool cpu_library = false;
  for (const auto& m : d["mapped"]) cpu_library = cpu_library || contains(m, "/libtorch_cpu.so");
  EXPECT_TRUE(cpu_library) << "the process's own maps name torch's libraries";
  const auto agree = deep_findings(j, "deep-agrees", "(/usr/bin/python3)");
  ASSERT_EQ(agree.size(), 1u) << j["findings"].dump(1);
  EXPECT_TRUE(contains(joined_evidence(agree[0]), "GPU available False, 0 devices"));
  EXPECT_TRUE(contains(joined_evidence(agree[0]), "shared objects mapped"));
}

TEST(ScenarioDeep, LdPreloadForcingAnotherLibcudartIsNamedWithBothPaths) {
  if (!have_debian_python()) GTEST_SKIP() << "needs Debian's /usr/bin/python3 (3.11)";
  const auto venv = make_venv("preload");
  const auto other = fs::path(venv).parent_path() / "other";
  fs::create_directories(other);
  run_sh("cc -shared -fPIC " + (fs::path(venv).parent_path() / "f.c").string() + " -Wl,-soname,libcudart.so.12 -o " +
         (other / "libcudart.so.12").string());
  auto env = activated(venv);
  env["LD_PRELOAD"] = (other / "libcudart.so.12").string();
  // A sanitized cudoctor gets the preload too: ASan must not insist on coming first.
  const char* asan = std::getenv("ASAN_OPTIONS");
  env["ASAN_OPTIONS"] = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "verify_asan_link_order=0";
  const auto j = check_deep({}, env);
  const auto differs = deep_findings(j, "deep-library-differs", venv + "/bin/python3");
  ASSERT_EQ(differs.size(), 1u) << j["findings"].dump(1);
  const auto& f = differs[0];
  EXPECT_TRUE(contains(f["title"], "libcudart.so.12 from " + (other / "libcudart.so.12").string())) << f["title"];
  EXPECT_TRUE(contains(f["title"], "not the predicted " + venv +
                                       "/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"))
      << f["title"];
  // Debian's torch beside it maps the preloaded library too, which nothing of its own needs.
  if (fs::exists("/usr/lib/python3/dist-packages/torch/version.py")) {
    const auto extra = deep_findings(j, "deep-library-extra", "(/usr/bin/python3)");
    ASSERT_EQ(extra.size(), 1u) << j["findings"].dump(1);
    EXPECT_TRUE(contains(extra[0]["detail"], (other / "libcudart.so.12").string() + ": LD_PRELOAD loads it."));
  }
  EXPECT_TRUE(contains(f["detail"], "LD_PRELOAD loads it before anything else")) << f["detail"];
  EXPECT_EQ(f["fix"]["commands"], nlohmann::json({"unset LD_PRELOAD"}));

  // Without LD_PRELOAD the same venv agrees.
  const auto same = check_deep({}, activated(venv));
  EXPECT_EQ(deep_findings(same, "deep-agrees", venv + "/bin/python3").size(), 1u) << same["findings"].dump(1);
  EXPECT_TRUE(deep_findings(same, "deep-library-differs", venv).empty());
}

TEST(ScenarioDeep, AnImportThatSegfaultsOrHangsIsContained) {
  if (!have_debian_python()) GTEST_SKIP() << "needs Debian's /usr/bin/python3 (3.11)";
  const auto crash = make_venv("segv", "import ctypes\nctypes.string_at(0)\n");
  CliResult run;
  const auto j = check_deep({}, activated(crash), &run);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.signal, 0) << "cudoctor itself did not crash";
  const auto failed = deep_findings(j, "deep-import-failed", crash + "/bin/python3");
  ASSERT_EQ(failed.size(), 1u) << j["findings"].dump(1);
  EXPECT_TRUE(contains(failed[0]["title"], "died of signal 11 (SEGV) in import torch")) << failed[0]["title"];
  EXPECT_EQ(failed[0]["fix"]["checks"], nlohmann::json({crash + "/bin/python3 -c 'import torch'"}));

  const auto hang = make_venv("hang", "import time\ntime.sleep(600)\n");
  const auto start = std::chrono::steady_clock::now();
  const auto h = check_deep({"--timeout", "2"}, activated(hang), &run);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(60)) << "a 600 s import is cut at --timeout";
  const auto hung = deep_findings(h, "deep-import-failed", hang + "/bin/python3");
  ASSERT_EQ(hung.size(), 1u) << h["findings"].dump(1);
  EXPECT_TRUE(contains(hung[0]["title"], "did not finish within 2 s (--timeout) in import torch")) << hung[0]["title"];
  // Nothing it started is left running.
  // ([/] keeps pgrep's own shell, whose command line holds the pattern, from matching.)
  EXPECT_EQ(shell_output("pgrep -f '[/]" + hang.substr(1) + "/bin/python3' || true"), "");
}

// From root, an environment another user owns is that user's code: it runs as them.
TEST(ScenarioDeep, RootRunsAUsersEnvironmentAsThatUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  if (!have_debian_python()) GTEST_SKIP() << "needs Debian's /usr/bin/python3 (3.11)";
  const auto venv =
      make_venv("owned", "import os\nopen(os.environ['CUDOCTOR_TEST_UID_FILE'], 'w').write(str(os.getuid()))\n");
  const auto uid_file = fs::path(venv).parent_path() / "uid";
  run_sh("chown -R nobody:nogroup '" + fs::path(venv).parent_path().string() + "'");
  auto env = activated(venv);
  env["CUDOCTOR_TEST_UID_FILE"] = uid_file.string();
  const auto j = check_deep({}, env);
  const auto view = deep_findings(j, "deep-agrees", venv + "/bin/python3");
  ASSERT_EQ(view.size(), 1u) << j["findings"].dump(1);
  EXPECT_TRUE(contains(joined_evidence(view[0]), "ran as nobody, the owner of the environment"));
  std::ifstream in(uid_file);
  std::string uid;
  in >> uid;
  EXPECT_EQ(uid, shell_output("id -u nobody").substr(0, uid.size())) << "its code ran as nobody, not as root";
  EXPECT_NE(uid, "0");
}

// The interpreter dies with cudoctor, also after it changed to the environment's owner (a change
// of user clears the parent-death signal, which must be set after it).
TEST(ScenarioDeep, AHangingImportDiesWithCudoctorWhateverItsUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  if (!have_debian_python()) GTEST_SKIP() << "needs Debian's /usr/bin/python3 (3.11)";
  const auto venv = make_venv("orphan", "import time\ntime.sleep(600)\n");
  run_sh("chown -R nobody:nogroup '" + fs::path(venv).parent_path().string() + "'");
  std::string env_line = "env -i PATH=" + venv + "/bin:/usr/bin:/bin VIRTUAL_ENV=" + venv + " HOME=/nonexistent";
  if (const char* asan = std::getenv("ASAN_OPTIONS")) env_line += std::string(" ASAN_OPTIONS=") + asan;
  run_sh("(" + env_line + " '" + cudoctor_binary() +
         "' check --deep --timeout 300 > /dev/null 2>&1 & pid=$!; sleep 3; "
         "kill -9 $pid; wait $pid) || true");
  const auto pattern = "'[/]" + venv.substr(1) + "/bin/python3'";
  // The kernel delivers the parent-death signal at once; give the reaping a moment.
  std::string left;
  for (int i = 0; i < 20; ++i) {
    left = shell_output("pgrep -f " + pattern + " || true");
    if (left.empty()) break;
    run_sh("sleep 0.1");
  }
  EXPECT_EQ(left, "") << "the interpreter outlived cudoctor";
  (void)!std::system(("pkill -9 -f " + pattern + " 2>/dev/null").c_str());
}

TEST(ScenarioDeep, RefusedWhereItCannotBeHonest) {
  const auto under_root = run_cudoctor({"check", "--deep", "--root", ::testing::TempDir()});
  EXPECT_EQ(under_root.exit_code, 2);
  EXPECT_TRUE(contains(under_root.err, "not under --root")) << under_root.err;
  const auto no_runtime = run_cudoctor({"check", "--deep", "--no-runtime"});
  EXPECT_EQ(no_runtime.exit_code, 2);
  EXPECT_TRUE(contains(no_runtime.err, "--no-runtime forbids")) << no_runtime.err;
  const auto other = run_cudoctor({"tune", "--deep"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_TRUE(contains(other.err, "--deep belongs to check"));
}

}  // namespace
}  // namespace cudoctor::testing
