// Fix commands checked against the machine they are printed for: each scenario asserts the
// commands themselves (the interpreter of the environment, the build `plan` recommends for its
// GPU, driver and Python, root or sudo, the directory to take off LD_LIBRARY_PATH), and that
// every command and check the report prints parses as shell (`bash -n`).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "machines.hpp"
#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every command and check of every finding parses as bash.
void expect_commands_parse(const Checked& c) {
  for (const auto& f : c.report["findings"])
    for (const char* list : {"commands", "checks"})
      for (const auto& cmd : f["fix"][list])
        EXPECT_TRUE(bash_parses(cmd.get<std::string>())) << f["id"] << " " << list << ": " << cmd;
}

// The check above would pass anything if bash -n did not run: it must reject a broken line.
TEST(ScenarioFixesL3Harness, BashNRejectsABrokenLine) {
  EXPECT_FALSE(bash_parses("echo \"$(ls"));
  EXPECT_FALSE(bash_parses("kubectl describe node <node> | grep -i nvidia.com/gpu")) << "a <placeholder> before a pipe";
  EXPECT_TRUE(bash_parses("echo \"$(ls)\" | grep -v -x -F -e 'a b'"));
}

std::vector<std::string> commands(const json& f) {
  std::vector<std::string> out;
  for (const auto& c : f["fix"]["commands"]) out.push_back(c);
  return out;
}
std::vector<std::string> checks(const json& f) {
  std::vector<std::string> out;
  for (const auto& c : f["fix"]["checks"]) out.push_back(c);
  return out;
}

// What fixes::as_root prints here: the command itself for root, else through the fixture's sudo.
std::string as_root(const std::string& cmd) {
  return ::geteuid() == 0 ? cmd : "sudo " + cmd;
}

const std::string k_index = " --index-url https://download.pytorch.org/whl/";
const std::string k_drop_prefix =
    "export LD_LIBRARY_PATH=\"$(printf '%s' \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -v -x -F -e ";
const std::string k_drop_suffix = " | paste -sd:)\"";

// A Debian 12 machine with an RTX 3090 (sm_86) on driver `driver` and a CPU-only torch in a
// Python `python` venv.
void build_py_venv_machine(FixtureRoot& r, const std::string& driver, const std::string& python) {
  add_debian_12(r);
  add_gpu(r, 0x2204, driver);
  build_venv(r, "None", "None", {.python = python});
}

TEST(ScenarioFixesL3, CpuOnlyTorchInAPython38VenvGetsABuildWithA38Wheel) {
  FixtureRoot r;
  build_py_venv_machine(r, "470.256.02", "3.8");
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  const auto f = c.finding("cpu-only-build");
  ASSERT_FALSE(f.is_null()) << c.ids();
  // 470 runs CUDA ≤ 11.4 natively: PyTorch 1.12's cu113 build, which has Python 3.8 wheels.
  EXPECT_EQ(commands(f),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"torch==1.12.*\"" + k_index + "cu113"})
      << f.dump(1);
  EXPECT_EQ(f["fix"]["text"], "Install a CUDA build that fits this machine in this environment.");
  expect_commands_parse(c);

  // On 535 the newest native build is PyTorch 2.7 cu118, which has no 3.8 wheel: 2.4 cu121 is
  // the newest native one that does.
  FixtureRoot r535;
  build_py_venv_machine(r535, "535.104.05", "3.8");
  const auto c535 = check_root(r535, {"--no-runtime"}, k_activated_venv);
  EXPECT_EQ(commands(c535.finding("cpu-only-build")),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"torch==2.4.*\"" + k_index + "cu121"})
      << c535.finding("cpu-only-build").dump(1);
  FixtureRoot r311;
  build_py_venv_machine(r311, "535.104.05", "3.11");
  const auto c311 = check_root(r311, {"--no-runtime"}, k_activated_venv);
  EXPECT_EQ(commands(c311.finding("cpu-only-build")),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"torch==2.7.*\"" + k_index + "cu118"});
  expect_commands_parse(c535);
}

TEST(ScenarioFixesL3, CpuOnlyTorchThatCondaInstalledIsRemovedWithCondaFirst) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_gpu(r, 0x2684, "550.54.14");  // RTX 4090, sm_89
  const std::string env = "/opt/conda/envs/ml";
  r.file(env + "/conda-meta/pytorch-2.5.1-py3.11_cpu_0.json", "{}");
  r.file(env + "/conda-meta/python-3.11.10-h9e4cc4f_3_cpython.json", "{}");
  r.file(env + "/bin/python3.11",
         "\x7f"
         "ELF",
         0755)
      .link(env + "/bin/python3", "python3.11")
      .link(env + "/bin/python", "python3.11");
  r.file(env + "/lib/python3.11/site-packages/torch/version.py",
         "__version__ = '2.5.1'\ndebug = False\ncuda = None\nhip = None\n");
  r.file("/opt/conda/bin/conda", "#!/bin/sh\n", 0755);
  const auto c = check_root(r, {"--no-runtime"}, {{"PATH", "/opt/conda/bin:/usr/bin:/bin"}});
  const auto f = c.finding("cpu-only-build");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["title"], "(/opt/conda/envs/ml/bin/python3) is a CPU-only build")) << f["title"];
  EXPECT_EQ(commands(f), (std::vector<std::string>{
                             "conda remove -y -p /opt/conda/envs/ml pytorch",
                             "/opt/conda/envs/ml/bin/python3 -m pip install \"torch==2.7.*\"" + k_index + "cu118",
                         }))
      << f.dump(1);
  EXPECT_EQ(f["fix"]["text"], "Install a CUDA build that fits this machine with pip, after removing conda's package.");
  expect_commands_parse(c);
}

TEST(ScenarioFixesL3, DebiansSystemTorchOnADriverKnownOnlyFromLibcudasName) {
  FixtureRoot r;
  add_debian_12(r);
  if (!add_debian_535_libraries(r))
    GTEST_SKIP() << "Debian's NVIDIA 535 packages are not unpacked (scripts/install-deps.sh --test)";
  // No kernel module loaded: the driver's version is only libcuda.so.1's file name.
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2204, .class_code = 0x030000});
  if (fs::exists("/usr/bin/python3"))
    r.copy("/usr/bin/python3", fs::canonical("/usr/bin/python3"));
  else
    r.file("/usr/bin/python3",
           "\x7f"
           "ELF",
           0755);
  r.file("/usr/lib/python3/dist-packages/torch/version.py",
         "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\nhip = None\n");
  const bool toolkit = add_cuda13_toolkit_runtime(r);
  const auto c = check_root(r, {"--no-runtime"}, {{"PATH", "/usr/bin:/bin"}});
  const auto f = c.finding("cpu-only-build");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"], "PyTorch 1.13.0a0 (/usr/bin/python3) is a CPU-only build");
  // The newest build 535 runs natively (not cu124/cu126 through minor-version compatibility,
  // never cu13x), into a venv of the system's interpreter.
  EXPECT_EQ(commands(f), (std::vector<std::string>{
                             "/usr/bin/python3 -m venv ~/.venvs/gpu",
                             "~/.venvs/gpu/bin/python -m pip install \"torch==2.7.*\"" + k_index + "cu118",
                         }))
      << f.dump(1);
  EXPECT_EQ(
      f["fix"]["text"],
      "Install a CUDA build that fits this machine into a virtual environment (the system's package stays as it is).");
  for (const auto& x : c.report["findings"])
    for (const auto& cmd : x["fix"]["commands"]) EXPECT_FALSE(contains(cmd, "cu13")) << x["id"] << ": " << cmd;
  if (toolkit) {
    // L2 judges the toolkit with the same driver, and says nothing else of it.
    const auto newer = c.finding("toolkit-newer-than-driver");
    ASSERT_FALSE(newer.is_null()) << c.ids();
    EXPECT_TRUE(contains(newer["title"], "this driver is 535.309.01")) << newer["title"];
    EXPECT_EQ(commands(newer), std::vector<std::string>{"cudoctor plan"});
    EXPECT_FALSE(c.has("toolkit-found")) << c.ids();
  }
  expect_commands_parse(c);
}

TEST(ScenarioFixesL3, ABuildTheDriverCannotRunAndARocmBuild) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "535.104.05");  // H100, sm_90
  build_venv(r, "13.0");
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  const auto f = c.finding("framework-cuda-too-new-for-driver");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(commands(f),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"torch==2.7.*\"" + k_index + "cu118"});
  EXPECT_EQ(f["fix"]["text"],
            "Upgrade the driver, or install the build for a CUDA this driver runs in this environment.");
  expect_commands_parse(c);
  FixtureRoot rocm;
  add_debian_12(rocm);
  add_gpu(rocm, 0x2330, "535.104.05");
  build_venv(rocm, "None", "6.0.32830", {.python = "3.8"});
  const auto c2 = check_root(rocm, {"--no-runtime"}, k_activated_venv);
  EXPECT_EQ(commands(c2.finding("framework-rocm-build")),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"torch==2.4.*\"" + k_index + "cu121"})
      << c2.ids();
  expect_commands_parse(c2);
}

TEST(ScenarioFixesL3, ShadowingCopiesComparedByVersion) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod): without them L1 is the break";
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "550.54.14");
  ASSERT_TRUE(add_device_nodes(r, 1));
  build_venv(r, "12.4");
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  r.file(site + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA",
         "Name: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n");
  r.file(site + "/nvidia_cublas_cu12-12.4.5.8.dist-info/METADATA", "Name: nvidia-cublas-cu12\nVersion: 12.4.5.8\n");
  // On LD_LIBRARY_PATH: an older cuDNN 9, the same CUDA runtime, a newer cuBLAS, named as
  // NVIDIA's packages name them.
  add_shared_library(r, "/opt/old/lib/libcudnn.so.9.0.0", "libcudnn.so.9");
  r.link("/opt/old/lib/libcudnn.so.9", "libcudnn.so.9.0.0");
  for (const char* part :
       {"graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"})
    add_shared_library(r, std::string("/opt/old/lib/libcudnn_") + part + ".so.9",
                       std::string("libcudnn_") + part + ".so.9");
  add_shared_library(r, "/opt/old/lib/libcudart.so.12.4.127", "libcudart.so.12");
  r.link("/opt/old/lib/libcudart.so.12", "libcudart.so.12.4.127");
  add_shared_library(r, "/opt/old/lib/libcublas.so.12.6.4.1", "libcublas.so.12");
  r.link("/opt/old/lib/libcublas.so.12", "libcublas.so.12.6.4.1");
  auto env = k_activated_venv;
  env["LD_LIBRARY_PATH"] = "/opt/old/lib";
  const auto c = check_root(r, {"--no-runtime"}, env);
  const auto who = std::string("PyTorch 2.5.1+cu124 (/home/u/venv/bin/python3)");
  const auto shadowed = c.findings("framework-library-shadowed");
  ASSERT_EQ(shadowed.size(), 1u) << c.ids();
  json cudnn = shadowed.front();
  json cublas = c.finding("framework-library-shadowed-by-newer");
  ASSERT_FALSE(cublas.is_null()) << c.ids();
  EXPECT_EQ(cudnn["title"], who + " loads cuDNN 9.0.0 from /opt/old/lib/libcudnn.so.9, older than its own 9.1.0.70");
  EXPECT_EQ(cudnn["severity"], "error");
  EXPECT_TRUE(
      contains(joined_evidence(cudnn), "its own copy: version 9.1.0.70, from nvidia_cudnn_cu12 9.1.0.70 (dist-info)"));
  EXPECT_EQ(commands(cudnn), std::vector<std::string>{k_drop_prefix + "/opt/old/lib" + k_drop_suffix});
  EXPECT_EQ(cublas["title"],
            who + " loads cuBLAS 12.6.4.1 from /opt/old/lib/libcublas.so.12, newer than its own 12.4.5.8");
  EXPECT_EQ(cublas["severity"], "warn");
  const auto dup = c.finding("framework-library-duplicate");
  ASSERT_FALSE(dup.is_null()) << c.ids();
  EXPECT_EQ(
      dup["title"],
      who + " loads the CUDA runtime 12.4.127 from /opt/old/lib/libcudart.so.12, the same version as its own copy");
  EXPECT_EQ(dup["severity"], "warn");
  EXPECT_EQ(c.report["verdict"]["break_finding"], "framework-library-shadowed");
  EXPECT_TRUE(contains(c.report["verdict"]["summary"], "cuDNN 9.0.0")) << c.report["verdict"];
  expect_commands_parse(c);
  // The line takes the directory off LD_LIBRARY_PATH and nothing else.
  const auto out = shell_output("LD_LIBRARY_PATH=/a:/opt/old/lib:/opt/old/lib64:/b; " + commands(cudnn)[0] +
                                "; printf '%s' \"$LD_LIBRARY_PATH\"");
  EXPECT_EQ(out, "/a:/opt/old/lib64:/b");
}

TEST(ScenarioFixesL3, StubsDirectoryWithoutLibcudaSo1IsAWarning) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "550.54.14");
  if (!add_cuda13_toolkit_runtime(r)) GTEST_SKIP() << "no CUDA 13.0 toolkit at /usr/local/cuda-13.0";
  ASSERT_TRUE(fs::exists(r.host("/usr/local/cuda-13.0/lib/stubs/libcuda.so")));
  ASSERT_FALSE(fs::exists(r.host("/usr/local/cuda-13.0/lib/stubs/libcuda.so.1")));
  r.file("/usr/bin/sudo", "#!/bin/sh\n", 04755);
  const auto c = check_root(r, {"--no-runtime"}, {{"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib/stubs"}});
  EXPECT_FALSE(c.has("stubs-on-loader-path")) << c.ids();
  const auto f = c.finding("stubs-dir-on-loader-path");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "warn");
  EXPECT_EQ(f["layer"], "L2");
  EXPECT_EQ(f["title"], "A CUDA stubs directory is on the loader's path: /usr/local/cuda-13.0/lib/stubs");
  EXPECT_TRUE(contains(f["detail"], "reachable as libcuda.so by programs that dlopen the unversioned name"));
  EXPECT_EQ(commands(f), std::vector<std::string>{k_drop_prefix + "/usr/local/cuda-13.0/lib/stubs" + k_drop_suffix})
      << "no ldconfig: nothing in /etc/ld.so.conf.d names it";
  expect_commands_parse(c);
  // From /etc/ld.so.conf.d instead: the loader's cache is refreshed as root, LD_LIBRARY_PATH
  // is left alone.
  r.file("/etc/ld.so.conf.d/cuda-stubs.conf", "/usr/local/cuda-13.0/lib/stubs\n");
  const auto conf = check_root(r, {"--no-runtime"});
  const auto g = conf.finding("stubs-dir-on-loader-path");
  ASSERT_FALSE(g.is_null()) << conf.ids();
  EXPECT_EQ(commands(g), std::vector<std::string>{as_root("ldconfig")});
  EXPECT_EQ(g["fix"]["text"],
            "Delete its line from /etc/ld.so.conf.d/cuda-stubs.conf and refresh the loader's cache (link with "
            "-L…/stubs only).");
  expect_commands_parse(conf);
}

TEST(ScenarioFixesL3, LibcudaSo1InTheStubsDirectoryIsTheError) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "550.54.14");
  if (!add_cuda13_toolkit_runtime(r)) GTEST_SKIP() << "no CUDA 13.0 toolkit at /usr/local/cuda-13.0";
  r.link("/usr/local/cuda-13.0/lib/stubs/libcuda.so.1", "libcuda.so");
  const auto c = check_root(r, {"--no-runtime"}, {{"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib/stubs"}});
  const auto f = c.finding("stubs-on-loader-path");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["title"], "libcuda.so.1 resolves to the toolkit's stub: /usr/local/cuda-13.0/lib/stubs/libcuda.so.1");
  EXPECT_EQ(commands(f), std::vector<std::string>{k_drop_prefix + "/usr/local/cuda-13.0/lib/stubs" + k_drop_suffix});
  EXPECT_FALSE(c.has("stubs-dir-on-loader-path"));
  expect_commands_parse(c);
}

TEST(ScenarioFixesL3, GlobalCudaSettingsAndTheToolkitsThatAreInstalled) {
  FixtureRoot r;
  add_debian_12(r);
  // Only a non-path variable: not a CUDA path.
  r.file("/etc/profile.d/gpu.sh",
         "# which GPU jobs get\nif [ -d /usr/local/cuda ]; then\n  export CUDA_VISIBLE_DEVICES=0\nfi\n"
         "export CUDA_MODULE_LOADING=LAZY\n");
  const auto none = check_root(r, {"--no-runtime"});
  EXPECT_FALSE(none.has("cuda-paths-set-globally")) << none.ids();
  // A PATH line with no toolkit installed: no command, and no version named.
  r.file("/etc/profile.d/cuda.sh", "export PATH=/usr/local/cuda/bin:$PATH\n");
  const auto c0 = check_root(r, {"--no-runtime"});
  const auto f0 = c0.finding("cuda-paths-set-globally");
  ASSERT_FALSE(f0.is_null()) << c0.ids();
  EXPECT_EQ(f0["title"], "CUDA paths are set in 1 system or shell start-up file line");
  EXPECT_EQ(commands(f0), std::vector<std::string>{});
  // One toolkit: switch the shell to it.
  r.file("/usr/local/cuda-12.4/version.json", R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.4.1"}})");
  const auto c1 = check_root(r, {"--no-runtime"});
  EXPECT_EQ(commands(c1.finding("cuda-paths-set-globally")),
            std::vector<std::string>{"eval \"$(cudoctor env /usr/local/cuda-12.4)\""});
  // Two toolkits but no direnv: still the shell.
  r.file("/usr/local/cuda-12.6/version.json", R"({"cuda" : {"name" : "CUDA SDK", "version" : "12.6.3"}})");
  const auto c2 = check_root(r, {"--no-runtime"});
  const auto f2 = c2.finding("cuda-paths-set-globally");
  ASSERT_EQ(commands(f2).size(), 1u);
  EXPECT_TRUE(commands(f2)[0].starts_with("eval \"$(cudoctor env /usr/local/cuda-12.")) << commands(f2)[0];
  // Two toolkits and direnv: a project's own .envrc, for a toolkit that is there.
  r.file("/usr/bin/direnv", "#!/bin/sh\n", 0755);
  const auto c3 = check_root(r, {"--no-runtime"});
  const auto f3 = c3.finding("cuda-paths-set-globally");
  ASSERT_EQ(commands(f3).size(), 1u);
  const auto cmd = commands(f3)[0];
  EXPECT_TRUE(cmd == "cudoctor env /usr/local/cuda-12.4 --write .envrc && direnv allow" ||
              cmd == "cudoctor env /usr/local/cuda-12.6 --write .envrc && direnv allow")
      << cmd;
  for (const auto* c : {&none, &c0, &c1, &c2, &c3}) expect_commands_parse(*c);
}

TEST(ScenarioFixesL3, VenvOverTheSystemsTorch) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2684, "550.54.14");
  if (fs::exists("/usr/bin/python3"))
    r.copy("/usr/bin/python3", fs::canonical("/usr/bin/python3"));
  else
    r.file("/usr/bin/python3",
           "\x7f"
           "ELF",
           0755);
  r.file("/usr/lib/python3/dist-packages/torch/version.py",
         "__version__ = '2.1.2'\ndebug = False\ncuda = None\nhip = None\n");
  r.file("/usr/lib/python3/dist-packages/torch-2.1.2.dist-info/INSTALLER", "debian\n");
  r.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n");
  r.dir("/home/u/venv/lib/python3.11/site-packages");
  r.link("/home/u/venv/bin/python3", "/usr/bin/python3");
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  EXPECT_FALSE(c.has("python-on-path-lacks-framework")) << c.ids();
  const auto cpu = c.findings("cpu-only-build");
  ASSERT_EQ(cpu.size(), 1u) << c.ids();
  EXPECT_EQ(cpu[0]["title"], "PyTorch 2.1.2 (/home/u/venv/bin/python3) is a CPU-only build");
  EXPECT_EQ(commands(cpu[0]),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"torch==2.7.*\"" + k_index + "cu118"});
  EXPECT_EQ(
      cpu[0]["fix"]["text"],
      "Install a CUDA build that fits this machine into this venv: its own site-packages come before the system's.");
  expect_commands_parse(c);
}

TEST(ScenarioFixesL3, CudaVisibleDevicesThatHidesEveryGpu) {
  // A healthy driver layer: with L1 broken, an L4 finding's fix is "Fix L1 first".
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "550.54.14");
  ASSERT_TRUE(add_device_nodes(r, 1));
  for (const std::string value : {"-1", "", "NoDevFiles"}) {
    const auto c = check_root(r, {"--no-runtime"}, {{"CUDA_VISIBLE_DEVICES", value}});
    const auto f = c.finding("cuda-visible-devices-hides-gpus");
    ASSERT_FALSE(f.is_null()) << value << ": " << c.ids();
    EXPECT_EQ(f["layer"], "L4");
    EXPECT_EQ(f["severity"], "warn");
    EXPECT_EQ(f["title"], "CUDA_VISIBLE_DEVICES=\"" + value + "\" hides every GPU");
    EXPECT_EQ(commands(f), std::vector<std::string>{"unset CUDA_VISIBLE_DEVICES"});
    EXPECT_EQ(checks(f), std::vector<std::string>{}) << "no nvidia-smi in this root";
    expect_commands_parse(c);
  }
  r.file("/usr/bin/nvidia-smi", "#!/bin/sh\n", 0755);
  const auto smi = check_root(r, {"--no-runtime"}, {{"CUDA_VISIBLE_DEVICES", "none"}});
  EXPECT_EQ(checks(smi.finding("cuda-visible-devices-hides-gpus")), std::vector<std::string>{"nvidia-smi -L"});
  const auto fine = check_root(r, {"--no-runtime"}, {{"CUDA_VISIBLE_DEVICES", "0"}});
  EXPECT_FALSE(fine.has("cuda-visible-devices-hides-gpus")) << fine.ids();
}

TEST(ScenarioFixesL3, CudaVisibleDevicesNamedByCuInitIsNotRepeated) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "535.104.05");
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {}, {{"CUDA_SIM_MODE", "no_device"}, {"CUDA_VISIBLE_DEVICES", "-1"}});
  EXPECT_EQ(c.finding("cuda-no-device")["title"], "CUDA_VISIBLE_DEVICES=\"-1\" hides every GPU") << c.ids();
  EXPECT_FALSE(c.has("cuda-visible-devices-hides-gpus")) << c.ids();
  EXPECT_EQ(commands(c.finding("cuda-no-device")), std::vector<std::string>{"unset CUDA_VISIBLE_DEVICES"});
  expect_commands_parse(c);
}

TEST(RealFixesL3, PlanIsSuggestedOnlyWithSomethingToPlanFrom) {
  FixtureRoot r;
  add_debian_12(r);
  add_cpuinfo(r, true);
  add_qemu_dmi(r);
  if (!add_cuda13_toolkit_runtime(r)) GTEST_SKIP() << "no CUDA 13.0 toolkit at /usr/local/cuda-13.0";
  const auto c = check_root(r);
  const auto f = c.finding("runtime-without-driver");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(commands(f), std::vector<std::string>{}) << "no GPU and no driver: nothing for plan to plan from";
  expect_commands_parse(c);
  // The real 535 driver under CUDA 13.0's runtime: plan knows the driver.
  FixtureRoot d;
  add_debian_12(d);
  add_pci(d, {.address = "0000:1b:00.0", .device = 0x2330, .class_code = 0x030200, .driver = "nvidia"});
  add_proc_modules(d, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(d, "535.309.01");
  if (!add_debian_535_libraries(d) || !add_cuda13_toolkit_runtime(d)) GTEST_SKIP() << "needs Debian's 535 driver";
  const auto c535 = check_root(d);
  const auto too_new = c535.finding("runtime-too-new-for-driver");
  ASSERT_FALSE(too_new.is_null()) << c535.ids();
  EXPECT_EQ(commands(too_new), std::vector<std::string>{"cudoctor plan"});
  expect_commands_parse(c535);
}

TEST(RealFixesL3, StubLibcudaAtRunTimeLooksWithChecks) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "535.104.05");
  if (!add_cuda13_toolkit_runtime(r)) GTEST_SKIP() << "no CUDA 13.0 toolkit at /usr/local/cuda-13.0";
  r.link("/usr/local/cuda-13.0/lib/stubs/libcuda.so.1", "libcuda.so");
  const auto c = check_root(r, {}, {{"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib/stubs"}});
  ASSERT_EQ(c.report["runtime"]["driver_api"]["init"]["code"], 34) << c.report["runtime"]["driver_api"];
  const auto l4 = c.finding("cuda-stub-driver");
  ASSERT_FALSE(l4.is_null()) << c.ids();
  EXPECT_EQ(checks(l4), (std::vector<std::string>{"echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n stubs",
                                                  "grep -rn stubs /etc/ld.so.conf.d/"}));
  EXPECT_EQ(l4["follows_from"], "stubs-on-loader-path");
  EXPECT_EQ(commands(l4), std::vector<std::string>{}) << "Fix L2 first";
  EXPECT_EQ(commands(c.finding("stubs-on-loader-path")),
            std::vector<std::string>{k_drop_prefix + "/usr/local/cuda-13.0/lib/stubs" + k_drop_suffix});
  expect_commands_parse(c);
}

}  // namespace
}  // namespace cudoctor::testing
