// L3 on this machine (Debian's CPU-only python3-torch) and on virtual environments built here:
// real ELF libraries compiled by the tests, a real fatbin built by nvcc 13 embedded in them,
// laid out as PyTorch's wheels lay them out.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "machines.hpp"
#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::string> k_env = {{"PATH", "/home/u/venv/bin:/usr/bin:/bin"},
                                                  {"VIRTUAL_ENV", "/home/u/venv"}};

nlohmann::json torch_of(const Checked& c) {
  for (const auto& e : c.report["pythons"])
    for (const auto& f : e["frameworks"])
      if (f["name"] == "torch") return f;
  return nullptr;
}

TEST(RealFramework, DebianCpuOnlyTorchAndTheWrongInterpreter) {
  if (!fs::exists("/usr/lib/python3/dist-packages/torch/version.py"))
    GTEST_SKIP() << "Debian's python3-torch is not installed (scripts/install-deps.sh --test)";
  // This machine as its user runs it: their PATH and HOME.
  std::map<std::string, std::string> env;
  for (const char* k : {"PATH", "HOME", "PYENV_ROOT", "PYENV_VERSION"})
    if (const char* v = std::getenv(k)) env[k] = v;
  const auto run = run_cudoctor({"--json", "--no-runtime"}, env);
  const auto j = nlohmann::json::parse(run.out);
  nlohmann::json system_env;
  for (const auto& e : j["pythons"])
    if (e["prefix"] == "/usr") system_env = e;
  ASSERT_FALSE(system_env.is_null()) << j["pythons"].dump(1);
  EXPECT_EQ(system_env["interpreter"], "/usr/bin/python3");
  ASSERT_FALSE(system_env["frameworks"].empty());
  EXPECT_EQ(system_env["frameworks"][0]["name"], "torch");
  EXPECT_EQ(system_env["frameworks"][0]["cuda"], "");
  nlohmann::json cpu;
  for (const auto& f : j["findings"])
    if (f["id"] == "cpu-only-build") cpu = f;
  ASSERT_FALSE(cpu.is_null());
  EXPECT_TRUE(contains(cpu["title"], "PyTorch 1.13") &&
              contains(cpu["title"], "(/usr/bin/python3) is a CPU-only build"));
  bool pip = false;
  for (const auto& c : cpu["fix"]["commands"])
    pip =
        pip || (contains(c, "pip install \"torch==") && contains(c, "--index-url https://download.pytorch.org/whl/cu"));
  EXPECT_TRUE(pip) << cpu.dump(1);
  // The python3 first on PATH: when it is not the system's, the report says so.
  if (j["python"]["path_python_env"] != "/usr" && !j["python"]["path_python_env"].get<std::string>().empty()) {
    bool said = false;
    for (const auto& f : j["findings"])
      said = said || (f["id"] == "python-on-path-lacks-framework" && contains(f["title"], "PyTorch 1.13.0a0 in /usr"));
    EXPECT_TRUE(said) << j["python"].dump(1);
  }
}

TEST(ScenarioFramework, HealthyVenvLoadsItsOwnWheels) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "550.54.14");  // H100, compute capability 9.0
  build_venv(r, "12.4");
  const auto c = check_root(r, {"--no-runtime"}, k_env);
  const auto t = torch_of(c);
  ASSERT_FALSE(t.is_null()) << c.report["pythons"].dump(1);
  EXPECT_EQ(t["cuda"], "12.4");
  std::map<std::string, std::string> rules;
  for (const auto& l : t["libraries"]) rules[l["soname"]] = l["rule"];
  EXPECT_EQ(rules["libcudart.so.12"], "DT_RUNPATH");
  EXPECT_EQ(rules["libcudnn.so.9"], "DT_RUNPATH");
  if (fs::exists("/usr/local/cuda-13.0/bin/nvcc")) {
    EXPECT_EQ(t["sm_archs"], nlohmann::json::array({"sm_80", "sm_90"}));
  }
  EXPECT_TRUE(c.has("framework-found")) << c.ids();
  EXPECT_FALSE(c.has("framework-no-kernels-for-gpu"));
  EXPECT_FALSE(c.has("framework-library-shadowed"));
  EXPECT_FALSE(c.has("framework-library-shadowed-by-newer"));
  EXPECT_EQ(c.report["python"]["path_python_env"], "/home/u/venv");
}

TEST(ScenarioFramework, ShadowedMissingOlderAndNoKernels) {
  if (!fs::exists("/usr/local/cuda-13.0/bin/nvcc")) GTEST_SKIP() << "needs nvcc for the fatbin";
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2b85, "570.124.06");  // RTX 5090, compute capability 12.0
  build_venv(r, "12.4");
  // An older cuBLAS in a directory on LD_LIBRARY_PATH shadows the wheel's.
  fs::create_directories(r.host("/opt/old-cuda/lib64"));
  run_sh("cc -shared -fPIC '" + r.host("/f.c").string() + "' -Wl,-soname,libcublas.so.12 -o '" +
         r.host("/opt/old-cuda/lib64/libcublas.so.12").string() + "'");
  // cuDNN removed from the venv, and an older cuDNN wheel's metadata left behind.
  fs::remove(r.host("/home/u/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9"));
  fs::rename(r.host("/home/u/venv/lib/python3.11/site-packages/nvidia_cudnn_cu12-9.1.0.70.dist-info"),
             r.host("/home/u/venv/lib/python3.11/site-packages/nvidia_cudnn_cu12-9.0.0.312.dist-info"));
  auto env = k_env;
  env["LD_LIBRARY_PATH"] = "/opt/old-cuda/lib64";
  const auto c = check_root(r, {"--no-runtime"}, env);
  const auto shadow = c.finding("framework-library-shadowed");
  ASSERT_FALSE(shadow.is_null()) << c.ids();
  EXPECT_TRUE(contains(shadow["title"],
                       "loads libcublas.so.12 from /opt/old-cuda/lib64/libcublas.so.12 instead of its own "
                       "/home/u/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12"))
      << shadow["title"];
  EXPECT_TRUE(contains(c.finding("framework-library-missing")["title"], "needs libcudnn.so.9"));
  EXPECT_TRUE(contains(c.finding("framework-library-older")["title"],
                       "pins nvidia-cudnn-cu12==9.1.0.70 but 9.0.0.312 is installed"));
  const auto k = c.finding("framework-no-kernels-for-gpu");
  ASSERT_FALSE(k.is_null()) << c.ids();
  EXPECT_TRUE(contains(k["title"], "has no kernels for sm_120 (compute capability 12.0)"));
  EXPECT_TRUE(contains(k["detail"], "cubins for sm_80 sm_90"));
}

TEST(ScenarioFramework, CudaTooNewForDriverAndRocmBuild) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "535.104.05");
  build_venv(r, "13.0");
  const auto c = check_root(r, {"--no-runtime"}, k_env);
  const auto f = c.finding("framework-cuda-too-new-for-driver");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(
      contains(f["title"], "is built for CUDA 13.0, which needs driver ≥ 580.65.06; this driver is 535.104.05"));
  FixtureRoot rocm;
  add_debian_12(rocm);
  add_gpu(rocm, 0x2330, "535.104.05");
  build_venv(rocm, "None", "6.0.32830");
  const auto c2 = check_root(rocm, {"--no-runtime"}, k_env);
  EXPECT_TRUE(c2.has("framework-rocm-build")) << c2.ids();
}

TEST(ScenarioFramework, UnsatisfiedSymbolVersion) {
  FixtureRoot r;
  add_debian_12(r);
  build_venv(r, "12.4");
  const auto site = r.host("/home/u/venv/lib/python3.11/site-packages").string();
  // torch built against a cuBLAS that defines libcublas.so.12.4 …
  std::ofstream(r.host("/new.map"))
      << "libcublas.so.12 { global: f; local: *; };\nlibcublas.so.12.4 { global: g; } libcublas.so.12;\n";
  std::ofstream(r.host("/old.map")) << "libcublas.so.12 { global: f; local: *; };\n";
  std::ofstream(r.host("/b.c")) << "int f(void) { return 0; } int g(void) { return 1; }\n";
  std::ofstream(r.host("/t.c")) << "int g(void); int h(void) { return g(); }\n";
  const auto cublas = site + "/nvidia/cublas/lib/libcublas.so.12";
  run_sh("cc -shared -fPIC -o '" + cublas + "' '" + r.host("/b.c").string() +
         "' -Wl,-soname,libcublas.so.12 -Wl,--version-script=" + r.host("/new.map").string());
  run_sh("cc -shared -fPIC -o '" + site + "/torch/lib/libtorch_cuda.so' '" + r.host("/t.c").string() + "' '" + cublas +
         "' -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cublas/lib'");
  // … and then given an older one without it.
  run_sh("cc -shared -fPIC -o '" + cublas + "' '" + r.host("/b.c").string() +
         "' -Wl,-soname,libcublas.so.12 -Wl,--version-script=" + r.host("/old.map").string());
  const auto c = check_root(r, {"--no-runtime"}, k_env);
  const auto f = c.finding("framework-symbol-version-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["title"],
                       "version libcublas.so.12.4 (in "
                       "/home/u/venv/lib/python3.11/site-packages/torch/lib/../../nvidia/cublas/lib/libcublas.so.12)"))
      << f["title"];
}

TEST(ScenarioFramework, GivenInterpreterAndWrongPython) {
  FixtureRoot r;
  add_debian_12(r);
  build_venv(r, "12.4");
  r.file("/opt/py/bin/python3", "#!/bin/sh\n", 0755);
  r.dir("/opt/py/lib/python3.12/site-packages");
  const auto c =
      check_root(r, {"--no-runtime", "--python", "/home/u/venv/bin/python3"}, {{"PATH", "/opt/py/bin:/usr/bin"}});
  bool given = false;
  for (const auto& e : c.report["pythons"])
    for (const auto& how : e["found_by"]) given = given || (how == "--python" && e["prefix"] == "/home/u/venv");
  EXPECT_TRUE(given) << c.report["pythons"].dump(1);
  EXPECT_TRUE(contains(c.finding("python-on-path-lacks-framework")["title"],
                       "python3 on PATH (/opt/py/bin/python3) has no framework"));
}

// JAX 0.4.26 (jax and jaxlib, as their version.py files read) with CUDA plugin wheels of
// 0.4.31: a mismatch JAX's own rules reject, named with each version and the pip line that
// aligns them, in the venv's own pip.
TEST(ScenarioFramework, JaxPluginsOfAnotherVersionThanJaxlib) {
  FixtureRoot r;
  add_debian_12(r);
  build_venv(r, "12.4");  // the venv and its interpreter; torch too, which is not the point here
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  r.file(site + "/jax/version.py", "_version: str = \"0.4.26\"\n_minimum_jaxlib_version: str = \"0.4.20\"\n");
  r.file(site + "/jax-0.4.26.dist-info/METADATA", "Metadata-Version: 2.1\nName: jax\nVersion: 0.4.26\n");
  r.file(site + "/jaxlib/version.py", "_version: str = \"0.4.26\"\n");
  r.file(site + "/jaxlib-0.4.26.dist-info/METADATA", "Metadata-Version: 2.1\nName: jaxlib\nVersion: 0.4.26\n");
  for (const char* w : {"jax_cuda12_plugin", "jax_cuda12_pjrt"})
    r.file(site + "/" + w + "-0.4.31.dist-info/METADATA",
           std::string("Metadata-Version: 2.1\nName: ") + w + "\nVersion: 0.4.31\n");
  fs::create_directories(r.host(site + "/jax_plugins/xla_cuda12"));
  run_sh("cc -shared -fPIC '" + r.host("/f.c").string() + "' -o '" +
         r.host(site + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so").string() + "'");
  const auto c = check_root(r, {"--no-runtime"}, k_env);
  const auto f = c.finding("jax-components-mismatch");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_TRUE(contains(f["title"],
                       "jax_cuda12_plugin 0.4.31 is not jaxlib's version 0.4.26: the CUDA backend fails "
                       "to start (\"Mismatched PJRT plugin PJRT API version\")"))
      << f["title"];
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "jax 0.4.26 (jax/version.py)")) << ev;
  EXPECT_TRUE(contains(ev, "jax_cuda12_pjrt 0.4.31 (jax_cuda12_pjrt-0.4.31.dist-info)")) << ev;
  EXPECT_EQ(f["fix"]["commands"].get<std::vector<std::string>>(),
            std::vector<std::string>{"/home/u/venv/bin/python3 -m pip install \"jax==0.4.26\" \"jaxlib==0.4.26\" "
                                     "\"jax-cuda12-plugin==0.4.26\" \"jax-cuda12-pjrt==0.4.26\""})
      << f.dump(1);
  // jaxlib older than jax's minimum.
  r.file(site + "/jax/version.py", "_version = '0.4.31'\n_minimum_jaxlib_version = '0.4.30'\n");
  const auto old = check_root(r, {"--no-runtime"}, k_env);
  const auto o = old.finding("jax-components-mismatch");
  ASSERT_FALSE(o.is_null()) << old.ids();
  EXPECT_TRUE(contains(o["title"], "jaxlib 0.4.26 is older than jax 0.4.31 accepts (≥ 0.4.30): import jax fails"))
      << o["title"];
}

}  // namespace
}  // namespace cudoctor::testing
