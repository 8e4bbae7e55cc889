// What cudoctor promises about the code it examines: nothing from a --root tree runs or is
// loaded unless asked; no link leads out of the root; every vendor misbehaviour ends within
// --timeout + 1 s as a finding, with nothing left running; a probe child cannot run a
// program, change the file system or signal cudoctor.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "machines.hpp"
#include "scenario.hpp"

extern char** environ;

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A unique tag in the environment of everything cudoctor starts, to find what is left.
std::string new_tag() {
  static int n = 0;
  return "cudoctor-test-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

// Processes whose environment holds SIM_TAG=tag (cudoctor's children, their children).
std::vector<int> left_behind(const std::string& tag) {
  std::vector<int> out;
  const std::string want = "SIM_TAG=" + tag;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(f)), {});
    for (std::size_t at = 0; at < env.size(); at = env.find('\0', at) + 1) {
      if (env.compare(at, want.size() + 1, want + '\0') == 0) out.push_back(std::stoi(name));
      if (env.find('\0', at) == std::string::npos) break;
    }
  }
  return out;
}

void expect_nothing_left(const std::string& tag, const std::string& what) {
  // A process killed a moment ago may still be exiting.
  for (int i = 0; i < 50 && !left_behind(tag).empty(); ++i) ::usleep(20000);
  const auto left = left_behind(tag);
  EXPECT_TRUE(left.empty()) << what << ": " << left.size() << " processes left behind, first pid " << left.front();
  for (const int p : left) ::kill(p, SIGKILL);
}

// A server with an H100 on the simulated driver (NVML, libcuda) and a toolkit whose
// runtime is the simulated one, its "GPU" being host memory. False when its device nodes
// could not be made (not root).
bool build_server(FixtureRoot& r, int gpus = 1) {
  add_debian_12(r, "6.1.0-18-amd64", "gpu-node");
  for (int i = 0; i < gpus; ++i) {
    char address[32];
    std::snprintf(address, sizeof address, "0000:%02x:00.0", 0x1b + i);
    add_pci(r, {.address = address, .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  }
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
  r.copy("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", CUDOCTOR_CUDART_SIM);
  r.link("/usr/local/cuda-12.4/lib64/libcudart.so.12", "libcudart.so.12.4.127");
  return add_device_nodes(r, gpus);
}

// nvcc as a canary: it embeds the banner real nvcc prints, and leaves a file when it runs.
void add_canary_nvcc(FixtureRoot& r, const fs::path& canary_dir) {
  const auto src = r.host("/tmp/nvcc.c");
  r.file("/tmp/nvcc.c",
         "#include <stdio.h>\n#include <fcntl.h>\n"
         "static const char banner[] = \"Cuda compilation tools, release 12.4, V12.4.131\";\n"
         "int main(void) { close(open(\"" +
             (canary_dir / "nvcc-ran").string() + "\", O_CREAT | O_WRONLY, 0644)); puts(banner); return 0; }\n");
  r.dir("/usr/local/cuda-12.4/bin");
  ASSERT_EQ(
      std::system(("cc -o '" + r.host("/usr/local/cuda-12.4/bin/nvcc").string() + "' '" + src.string() + "'").c_str()),
      0);
}

// Every path of a tree with its type, size and modification time: what a run must not change.
std::string tree_listing(const fs::path& top) {
  std::string out;
  for (auto it = fs::recursive_directory_iterator(top, fs::directory_options::none);
       it != fs::recursive_directory_iterator(); ++it) {
    std::error_code ec;
    const auto st = fs::symlink_status(it->path(), ec);
    out += it->path().string() + " " + std::to_string(static_cast<int>(st.type()));
    if (st.type() == fs::file_type::regular)
      out += " " + std::to_string(fs::file_size(it->path(), ec)) + " " +
             std::to_string(fs::last_write_time(it->path(), ec).time_since_epoch().count());
    out += "\n";
  }
  return out;
}

struct Canary {
  FixtureRoot dir;  // a scratch directory of the test's own, outside the examined root
  fs::path path() const { return dir.path(); }
  bool has(const std::string& name) const { return fs::exists(dir.path() / name); }
};

TEST(ScenarioSandbox, ATreesNvccAndLibrariesNeverRunUnlessAsked) {
  FixtureRoot r;
  Canary canary;
  build_server(r);
  add_canary_nvcc(r, canary.path());
  const std::map<std::string, std::string> env = {{"SIM_MISBEHAVE", "ctor:touch"},
                                                  {"SIM_CANARY_DIR", canary.path().string()}};
  const auto before = tree_listing(r.path());
  const auto check = run_cudoctor({"--root", r.path().string(), "--json"}, env);
  ASSERT_TRUE(check.exit_code == 0 || check.exit_code == 1) << check.err;
  const auto j = nlohmann::json::parse(check.out);
  // The toolkit's version is still known, from the bytes of nvcc.
  ASSERT_EQ(j["toolkits"].size(), 1u);
  EXPECT_EQ(j["toolkits"][0]["version"], "12.4.131");
  EXPECT_EQ(j["toolkits"][0]["witnesses"][0]["source"], "nvcc binary");
  bool said = false;
  for (const auto& f : j["findings"])
    said = said || (f["id"] == "runtime-not-run" && contains(f["title"], "--root without --runtime"));
  EXPECT_TRUE(said) << "the report says why L4 and L5 did not run";
  for (const auto& args : std::vector<std::vector<std::string>>{{"--root", r.path().string(), "toolkits"},
                                                                {"--root", r.path().string(), "env", "12.4"},
                                                                {"--root", r.path().string(), "--no-runtime"},
                                                                {"--root", r.path().string(), "plan"}})
    run_cudoctor(args, env);
  EXPECT_FALSE(canary.has("nvcc-ran")) << "the tree's nvcc was executed";
  EXPECT_FALSE(canary.has("loaded")) << "a library of the tree was loaded without --runtime";
  EXPECT_EQ(tree_listing(r.path()), before) << "the examined tree changed";

  // Asked for, the tree's libraries are loaded (the canary works); nvcc still never runs.
  run_cudoctor({"--root", r.path().string(), "--runtime", "--json"}, env);
  EXPECT_TRUE(canary.has("loaded"));
  EXPECT_FALSE(canary.has("nvcc-ran"));
}

TEST(ScenarioSandbox, ADanglingAbsoluteLinkNeverReadsTheHostsFile) {
  Canary outside;  // a host file the tree points at by its absolute path
  const auto secret = outside.path() / "version";
  std::ofstream(secret) << "TOPSECRET-4242\n";
  FixtureRoot r;
  add_debian_12(r);
  r.file("/root/.pyenv/shims/python3", "#!/bin/sh\n", 0755);
  r.link("/root/.pyenv/version", secret.string());
  r.link("/etc/ld.so.cache", "/etc/ld.so.cache");  // dangles inside the root
  r.copy("/libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6");
  const auto c = run_cudoctor({"--root", r.path().string(), "--no-runtime", "--json"},
                              {{"HOME", "/root"}, {"PATH", "/root/.pyenv/shims:/usr/bin"}});
  EXPECT_FALSE(contains(c.out, "TOPSECRET")) << "a host file's content reached the report";
  const auto why = run_cudoctor({"--root", r.path().string(), "ldd", "/libm.so.6", "--why", "libc.so.6"});
  EXPECT_FALSE(contains(why.out, "listed in the cache")) << why.out;
  EXPECT_TRUE(contains(why.out + why.err, "libc.so.6")) << why.out << why.err;
}

struct Timed {
  CliResult run;
  double seconds = 0;
  nlohmann::json report;
};

Timed timed_check(const FixtureRoot& r, std::map<std::string, std::string> env, const std::string& timeout = "2") {
  Timed t;
  const auto start = Clock::now();
  env.emplace("NVML_SIM_BUS", "27");  // 0x1b, where build_server puts the first GPU
  t.run = run_cudoctor(
      {"--root", r.path().string(), "--runtime", "--json", "--timeout", timeout, "--compute-timeout", timeout}, env);
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  try {
    t.report = nlohmann::json::parse(t.run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << t.run.err;
  }
  return t;
}

nlohmann::json finding(const nlohmann::json& report, const std::string& id) {
  for (const auto& f : report["findings"])
    if (f["id"] == id) return f;
  return {};
}

TEST(ScenarioSandbox, EveryHangEndsWithinTheTimeoutWithTheLibraryAndTheCall) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  ASSERT_TRUE(build_server(r, 4));
  const std::string nvml = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
  const std::string cuda_real = "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05";
  struct Case {
    std::string misbehave, id, title;
  };
  const std::vector<Case> cases = {
      {"nvml_init:close_fds_hang", "nvml-failed", "NVML hung (in nvmlInit_v2): no answer from " + nvml},
      {"nvml_init:sleep", "nvml-failed", "NVML hung (in nvmlInit_v2): no answer from " + nvml},
      {"cu_init:close_fds_hang", "cuda-driver-failed", "cuInit hung: no answer from " + cuda_real},
      {"rt_count:close_fds_hang", "cuda-runtime-failed", "(in cudaGetDeviceCount) hung"},
      {"rt_malloc:hang", "compute-failed", "The computation check on GPU 3 (in cudaMalloc) hung"},
      {"rt_memcpy:sleep", "compute-failed", "The computation check on GPU 0 (in cudaMemcpy) hung"},
  };
  const std::map<std::string, std::string> four = {{"CUDA_SIM_GPUS", "4"}, {"NVML_SIM_GPUS", "4"}};
  for (const auto& c : cases) {
    // The hang may cost the run its one --timeout (3 s), not two: measured against the same check
    // without the hang, just before, so a loaded machine's slower run is not read as a second
    // timeout (a fixed bound of 1 s over a 2 s timeout failed once in CI at 3.7 s with one kill).
    // Half a timeout of slack each way: a second timeout would be 3 s more, not 1.5.
    const auto healthy = timed_check(r, four, "3");
    auto env = four;
    const auto tag = new_tag();
    env.insert({{"SIM_MISBEHAVE", c.misbehave}, {"SIM_TAG", tag}});
    const auto t = timed_check(r, env, "3");
    EXPECT_LT(t.seconds, healthy.seconds + 3.0 + 1.5) << c.misbehave << ": one --timeout 3 over the healthy run's "
                                                      << healthy.seconds << " s " << t.report["findings"].dump(1);
    EXPECT_EQ(t.run.signal, 0) << c.misbehave;
    EXPECT_EQ(t.run.exit_code, 1) << c.misbehave << t.run.err;
    bool found = false;
    for (const auto& f : t.report["findings"]) found = found || (f["id"] == c.id && contains(f["title"], c.title));
    EXPECT_TRUE(found) << c.misbehave << ": no " << c.id << " with \"" << c.title << "\" in "
                       << t.report["findings"].dump(1);
    expect_nothing_left(tag, c.misbehave);
  }
}

TEST(ScenarioSandbox, AHelperThatKeepsTheReplyPipeOpenIsNoHang) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  ASSERT_TRUE(build_server(r));
  for (const char* where : {"nvml_init", "cu_init", "rt_count"}) {
    const auto tag = new_tag();
    // A parent that waited for EOF would sit out the whole --timeout and report the child hung;
    // a timeout far above the run's own time tells the two apart even on a loaded machine.
    const auto t = timed_check(r, {{"SIM_MISBEHAVE", std::string(where) + ":grandchild"}, {"SIM_TAG", tag}}, "20");
    EXPECT_LT(t.seconds, 10.0) << where << ": a complete reply needs no EOF";
    EXPECT_FALSE(finding(t.report, "nvml-ok").is_null()) << where;
    EXPECT_FALSE(finding(t.report, "cuda-driver-ok").is_null()) << where;
    EXPECT_TRUE(finding(t.report, "nvml-failed").is_null()) << where;
    // The copies ran (on the simulated runtime) and matched; no cuBLAS, so no GEMMs.
    EXPECT_TRUE(contains(finding(t.report, "compute-ok")["title"], "copies match")) << t.report["findings"].dump(1);
    expect_nothing_left(tag, where);  // the setsid helper was collected and killed
  }
}

TEST(ScenarioSandbox, CtrlCDuringAHungProbeLeavesNothingRunning) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  ASSERT_TRUE(build_server(r));
  const auto tag = new_tag();
  // NVML leaves a setsid helper behind, then cuInit hangs: Ctrl-C must take both.
  std::vector<std::string> env_strings = {"SIM_TAG=" + tag, "SIM_MISBEHAVE=nvml_init:grandchild", "CUDA_SIM_MODE=hang",
                                          "PATH=/usr/bin:/bin"};
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {cudoctor_binary(), "--root", r.path().string(), "--runtime", "--timeout", "60"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::usleep(1500 * 1000);  // well into the hung cuInit
  ::kill(pid, SIGINT);
  const auto start = Clock::now();
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "cudoctor dies of the Ctrl-C, status " << status;
  expect_nothing_left(tag, "Ctrl-C");
}

TEST(ScenarioSandbox, AProbeChildCannotRunProgramsChangeFilesOrSignalCudoctor) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  Canary canary;
  ASSERT_TRUE(build_server(r));
  std::ofstream(canary.path() / "victim") << "x";
  std::ofstream(canary.path() / "victim2") << "x";
  for (const char* where : {"ctor", "nvml_init", "cu_init"}) {
    const auto t =
        timed_check(r, {{"SIM_MISBEHAVE", std::string(where) + ":escape"}, {"SIM_CANARY_DIR", canary.path().string()}});
    EXPECT_EQ(t.run.signal, 0) << where << ": the child signalled cudoctor";
    EXPECT_FALSE(finding(t.report, "nvml-ok").is_null()) << where << t.run.err;
    for (const char* made : {"exec-ran", "symlink-made", "symlink-made.ok", "dir-made", "node-made", "victim-removed",
                             "victim2-renamed", "parent-signalled"})
      EXPECT_FALSE(canary.has(made)) << where << ": " << made;
    EXPECT_TRUE(canary.has("victim") && canary.has("victim2")) << where;
  }
}

TEST(ScenarioSandbox, EscapesInAGpuNameStayEscapedInEveryFormat) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  ASSERT_TRUE(build_server(r));
  const std::string name = "NVIDIA \x1b]0;PWNED\x07\x1b[2JH100\n  \xe2\x9c\x93 Everything is fine";
  const std::map<std::string, std::string> env = {{"NVML_SIM_NAME", name}, {"NVML_SIM_BUS", "27"}};
  for (const char* format : {"text", "markdown"}) {
    const auto c = run_cudoctor({"--root", r.path().string(), "--runtime", "-v", "--format", format}, env);
    EXPECT_FALSE(contains(c.out, "\x1b")) << format;
    EXPECT_FALSE(contains(c.out, "\n  \xe2\x9c\x93 Everything is fine")) << format << ": a fake line";
    EXPECT_TRUE(contains(c.out, "\\x1b]0;PWNED\\x07\\x1b[2JH100\\n")) << format << "\n" << c.out.substr(0, 3000);
  }
  const auto j = nlohmann::json::parse(run_cudoctor({"--root", r.path().string(), "--runtime", "--json"}, env).out);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["nvml"]["name"], name) << "JSON carries the value itself, escaped by JSON's rules";
}

TEST(ScenarioSandbox, ProbesThatMeetOnAnExclusiveProcessGpuAreAskedAgainAlone) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  Canary scratch;
  ASSERT_TRUE(build_server(r));
  // A second runtime, so that three children want the GPU at once.
  r.copy("/usr/local/cuda-12.6/lib64/libcudart.so.12.6.77", CUDOCTOR_CUDART_SIM);
  r.link("/usr/local/cuda-12.6/lib64/libcudart.so.12", "libcudart.so.12.6.77");
  const auto t = timed_check(r, {{"SIM_EXCLUSIVE", (scratch.path() / "gpu0.lock").string()}});
  EXPECT_FALSE(finding(t.report, "cuda-driver-ok").is_null()) << t.report["findings"].dump(1);
  int runtimes_ok = 0;
  for (const auto& f : t.report["findings"]) runtimes_ok += f["id"] == "cuda-runtime-ok";
  EXPECT_EQ(runtimes_ok, 2) << t.report["findings"].dump(1);
  for (const auto& c : t.report["runtime"]["cudarts"]) EXPECT_EQ(c["set_device"]["code"], 0) << c.dump();
}

// A health check beside a running job: the job holds the GPU (here in exclusive-process mode,
// the lock it holds), so a CUDA context of the check's own would fail with 46 and the node would
// be drained for being in use. --passive asks NVML alone: libcuda's cuInit is never called.
TEST(ScenarioSandbox, PassiveAsksNvmlAloneAndLeavesAGpuInUseToItsJob) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  Canary scratch;
  ASSERT_TRUE(build_server(r));
  const auto lock = (scratch.path() / "gpu0.lock").string();
  const int job = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(job, 0);
  ASSERT_EQ(::flock(job, LOCK_EX), 0) << "the job's context";
  const auto busy = timed_check(r, {{"SIM_EXCLUSIVE", lock}});
  EXPECT_EQ(busy.run.exit_code, 1) << "without --passive the check's own context meets the job's";
  EXPECT_TRUE(contains(finding(busy.report, "cuda-context-failed")["title"], "46 CUDA_ERROR_DEVICE_UNAVAILABLE"))
      << busy.report["findings"].dump(1);

  const std::map<std::string, std::string> env = {{"SIM_EXCLUSIVE", lock},
                                                  {"NVML_SIM_BUS", "27"},
                                                  {"SIM_MISBEHAVE", "cu_init:touch"},
                                                  {"SIM_CANARY_DIR", scratch.path().string()}};
  const auto passive = run_cudoctor({"--root", r.path().string(), "--runtime", "--passive", "--json"}, env);
  ::close(job);
  EXPECT_EQ(passive.exit_code, 0) << passive.err;
  const auto j = nlohmann::json::parse(passive.out);
  EXPECT_FALSE(finding(j, "nvml-ok").is_null()) << j["findings"].dump(1);
  EXPECT_EQ(j["gpus"][0]["nvml"]["name"], "NVIDIA H100 80GB HBM3") << "NVML still answers";
  EXPECT_EQ(j["runtime"]["ran"], false);
  EXPECT_EQ(finding(j, "runtime-not-run")["title"],
            "L4 and L5 not run: --passive: NVML only, no CUDA context on GPUs that jobs may be using");
  EXPECT_TRUE(finding(j, "cuda-context-failed").is_null());
  EXPECT_FALSE(scratch.has("loaded")) << "cuInit was called";
  const auto text = run_cudoctor({"--root", r.path().string(), "--runtime", "--passive"}, env);
  EXPECT_TRUE(contains(text.out, "L5 application skipped (--passive: NVML only")) << text.out;

  run_cudoctor({"--root", r.path().string(), "--runtime", "--json"}, env);
  EXPECT_TRUE(scratch.has("loaded")) << "the canary works: without --passive cuInit is called";

  const auto both = run_cudoctor({"--root", r.path().string(), "--passive", "--no-runtime"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err, "cudoctor: --passive asks NVML, which --no-runtime forbids: give one of them\n");
}

TEST(ScenarioSandbox, EscapesInAVersionPyStayEscapedInEveryFormat) {
  FixtureRoot r;
  add_debian_12(r);
  const std::string venv = "/home/u/venv";
  r.file(venv + "/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n");
  r.file(venv + "/bin/python3", "", 0755);
  r.file(venv + "/lib/python3.11/site-packages/torch/version.py",
         "__version__ = '2.5.1\x1b]0;PWNED\x07\x1b[2J+cu124'\ncuda = '12.4\x1b[31m'\nhip = None\n");
  const std::map<std::string, std::string> env = {{"VIRTUAL_ENV", venv}, {"PATH", venv + "/bin:/usr/bin"}};
  for (const char* format : {"text", "markdown"}) {
    const auto c = run_cudoctor({"--root", r.path().string(), "--no-runtime", "-v", "--format", format}, env);
    EXPECT_FALSE(contains(c.out, "\x1b")) << format;
    EXPECT_TRUE(contains(c.out, "2.5.1\\x1b]0;PWNED\\x07\\x1b[2J+cu124")) << format << "\n" << c.out.substr(0, 3000);
  }
  const auto j = run_cudoctor({"--root", r.path().string(), "--no-runtime", "--json"}, env);
  EXPECT_FALSE(contains(j.out, "\x1b"));
  EXPECT_TRUE(contains(j.out, "2.5.1\\u001b]0;PWNED")) << j.out.substr(0, 2000);
}

TEST(ScenarioSandbox, BadArgumentsAndHostileKnowledgeBasesAreClearErrors) {
  FixtureRoot r;
  add_debian_12(r);
  r.fifo("/fifo-python");
  for (const char* t : {"nan", "inf", "-1", "abc", "", "1e309"}) {
    const auto c = run_cudoctor({"--root", r.path().string(), "--timeout", t});
    EXPECT_EQ(c.exit_code, 2) << t;
    EXPECT_TRUE(contains(c.err, "is not a number of seconds")) << t << ": " << c.err;
  }
  const auto missing = run_cudoctor({"--root", r.path().string(), "--python", "/nonexistent/python3"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(contains(missing.err, "--python /nonexistent/python3: no such file")) << missing.err;
  const auto fifo = run_cudoctor({"--root", r.path().string(), "--python", "/fifo-python"});
  EXPECT_EQ(fifo.exit_code, 2);
  EXPECT_TRUE(contains(fifo.err, "not an interpreter (a fifo)")) << fifo.err;
  EXPECT_EQ(run_cudoctor({"--root", ""}).exit_code, 2);

  // A knowledge-base file that is a fifo, a device or huge: refused at once.
  FixtureRoot kb;
  kb.fifo("/gpus.json");
  const auto start = Clock::now();
  const auto f = run_cudoctor({"--kb", kb.path().string(), "kb"});
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(f.exit_code, 2);
  EXPECT_TRUE(contains(f.err, "gpus.json: not a regular file")) << f.err;
  fs::remove(kb.host("/gpus.json"));
  kb.link("/gpus.json", "/dev/zero");
  const auto z = run_cudoctor({"--kb", kb.path().string(), "kb"});
  EXPECT_EQ(z.exit_code, 2);
  EXPECT_TRUE(contains(z.err, "gpus.json: not a regular file")) << z.err;
}

TEST(ScenarioSandbox, ARelativeRootIsTakenFromTheWorkingDirectory) {
  FixtureRoot r;
  add_debian_12(r, "6.1.0-18-amd64", "relative-box");
  const auto parent = r.path().parent_path();
  const auto cmd = "cd '" + parent.string() + "' && '" + cudoctor_binary() + "' --root '" +
                   r.path().filename().string() + "' --no-runtime --json";
  const auto out = shell_output(cmd);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(nlohmann::json::parse(out)["host"]["hostname"], "relative-box");
}

}  // namespace
}  // namespace cudoctor::testing
