#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cudoctor/probe/framework_libraries.hpp"
#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {

snapshot::PythonFacts python_of(const sys::FakeSys& s) {
  Context ctx(s, {});
  return probe_python(ctx, {});
}

TEST(PythonProbe, AnEnvironmentNamedTwiceIsOneEnvironment) {
  sys::FakeSys s;
  s.set_env("HOME", "/root");
  s.dir("/opt/conda/envs/ml/conda-meta");
  s.link("/opt/conda/envs/alias", "/opt/conda/envs/ml");
  s.file("/root/.conda/environments.txt", "/opt/conda/envs/ml\n/opt/conda/envs/ml\n\n/opt/conda/envs/alias\n");
  const auto py = python_of(s);
  ASSERT_EQ(py.envs.size(), 1u);
  EXPECT_EQ(py.envs[0].prefix, "/opt/conda/envs/ml");
  EXPECT_EQ(py.envs[0].kind, "conda");
  EXPECT_EQ(py.envs[0].found_by, (std::vector<std::string>{"~/.conda/environments.txt", "conda environment"}));
  EXPECT_TRUE(py.lists_cut.empty());
}

TEST(PythonProbe, LongListsAreInspectedUpToTheBound) {
  sys::FakeSys s;
  s.set_env("HOME", "/root");
  std::string list;
  for (int i = 0; i < 10003; ++i) {
    s.dir(fmt::format("/root/.pyenv/versions/v{:05}", i));
    list += fmt::format("/srv/envs/e{}\n", i);
  }
  s.dir("/srv/envs/e0/conda-meta");
  s.file("/root/.conda/environments.txt", list);
  const auto py = python_of(s);
  EXPECT_EQ(py.envs.size(), 10001u) << "10000 pyenv versions and the one conda environment that exists";
  ASSERT_EQ(py.lists_cut.size(), 2u);
  EXPECT_EQ(py.lists_cut[0], (snapshot::EnvListCut{"/root/.pyenv/versions", 10003, 10000}));
  EXPECT_EQ(py.lists_cut[1], (snapshot::EnvListCut{"/root/.conda/environments.txt", 10003, 10000}));
  EXPECT_EQ(py.envs[9999].prefix, "/root/.pyenv/versions/v09999") << "the first ones, in the list's order";
  EXPECT_EQ(py.envs.back().prefix, "/srv/envs/e0");
}

// A venv made with --system-site-packages from Debian's /usr/bin/python3.11.
sys::FakeSys venv_over_debian(const std::string& flag) {
  sys::FakeSys s;
  s.set_env("VIRTUAL_ENV", "/home/u/venv");
  s.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\nInclude-System-Site-Packages = " + flag + "\nversion = 3.11.2\n");
  const std::string own = "/home/u/venv/lib/python3.11/site-packages";
  s.file(own + "/torch/version.py", "__version__ = '2.5.1+cpu'\ncuda = None\n");
  s.file(own + "/torch-2.5.1+cpu.dist-info/INSTALLER", "uv\n");
  // The base's: a torch the venv's shadows, jax and ONNX Runtime only the base has, and a
  // CuPy of another Python version the venv cannot import.
  s.file("/usr/lib/python3/dist-packages/torch/version.py", "__version__ = '2.1.2'\ncuda = None\n");
  s.file("/usr/lib/python3/dist-packages/jaxlib/version.py", "_version = '0.4.30'\n");
  s.file("/usr/lib/python3/dist-packages/jaxlib-0.4.30.dist-info/INSTALLER", "pip\n");
  s.dir("/usr/local/lib/python3.11/dist-packages/onnxruntime_gpu-1.19.2.dist-info");
  s.dir("/usr/lib/python3.12/dist-packages/cupy_cuda12x-13.3.0.dist-info");
  return s;
}

TEST(PythonProbe, SystemSitePackagesComeAfterTheVenvsOwn) {
  const auto s = venv_over_debian("True");
  const auto py = python_of(s);
  ASSERT_EQ(py.envs.size(), 1u);
  const auto& env = py.envs[0];
  EXPECT_EQ(env.kind, "venv");
  EXPECT_TRUE(env.system_site_packages);
  EXPECT_EQ(env.base_prefix, "/usr");
  EXPECT_FALSE(env.conda_meta);
  EXPECT_EQ(env.site_packages,
            (std::vector<std::string>{"/home/u/venv/lib/python3.11/site-packages",
                                      "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"}));
  ASSERT_EQ(env.frameworks.size(), 3u);
  EXPECT_EQ(env.frameworks[0].name, "torch");
  EXPECT_EQ(env.frameworks[0].version, "2.5.1+cpu") << "the venv's own shadows the base's";
  EXPECT_EQ(env.frameworks[0].installer, "uv");
  EXPECT_FALSE(env.frameworks[0].inherited);
  EXPECT_EQ(env.frameworks[1].name, "onnxruntime");
  EXPECT_TRUE(env.frameworks[1].inherited);
  EXPECT_EQ(env.frameworks[1].installer, "");
  EXPECT_EQ(env.frameworks[2].name, "jax");
  EXPECT_TRUE(env.frameworks[2].inherited);
  EXPECT_EQ(env.frameworks[2].installer, "pip");
}

TEST(PythonProbe, WithoutTheFlagOnlyTheVenvsOwn) {
  const auto s = venv_over_debian("false");
  const auto py = python_of(s);
  ASSERT_EQ(py.envs.size(), 1u);
  EXPECT_FALSE(py.envs[0].system_site_packages);
  EXPECT_EQ(py.envs[0].base_prefix, "/usr");
  EXPECT_EQ(py.envs[0].site_packages, (std::vector<std::string>{"/home/u/venv/lib/python3.11/site-packages"}));
  ASSERT_EQ(py.envs[0].frameworks.size(), 1u);
}

TEST(PythonProbe, CondaMetaNamesTheInstaller) {
  sys::FakeSys s;
  const auto env_with = [&](const std::string& prefix, std::initializer_list<const char*> records) {
    s.file(prefix + "/lib/python3.11/site-packages/torch/version.py", "__version__ = '2.5.1'\ncuda = None\n");
    s.dir(prefix + "/lib/python3.11/site-packages/torch-2.5.1.dist-info");
    for (const char* r : records) s.file(prefix + "/conda-meta/" + r, "{}");
  };
  env_with("/opt/conda/envs/a", {"pytorch-2.5.1-py3.11_cuda12.4_cudnn9.1.0_0.json", "python-3.11.9-h955ad1f_0.json"});
  env_with("/opt/conda/envs/b", {"pytorch-cuda-12.4-hc786d27_7.json", "pytorch-mutex-1.0-cuda.json"});
  const auto py = python_of(s);
  ASSERT_EQ(py.envs.size(), 2u);
  EXPECT_TRUE(py.envs[0].conda_meta);
  EXPECT_EQ(py.envs[0].frameworks.at(0).installer, "conda");
  EXPECT_TRUE(py.envs[1].conda_meta);
  EXPECT_EQ(py.envs[1].frameworks.at(0).installer, "") << "pytorch-cuda and pytorch-mutex are not pytorch";
}

TEST(PythonProbe, UnreadableSourcesAreRecorded) {
  sys::FakeSys s;
  s.set_env("VIRTUAL_ENV", "/home/u/venv");
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  s.file(site + "/torch/version.py", "__version__ = '2.5.1'\ncuda = '12.4'\n");
  s.file(site + "/torch-2.5.1.dist-info/METADATA", "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70\n");
  s.fail(site + "/torch-2.5.1.dist-info/METADATA", "Permission denied");
  s.dir("/home/u/venv/conda-meta").fail("/home/u/venv/conda-meta", "Permission denied");
  Context ctx(s, {});
  const auto py = probe_python(ctx, {});
  ASSERT_EQ(py.envs.size(), 1u);
  ASSERT_EQ(py.envs[0].frameworks.size(), 1u);
  EXPECT_TRUE(py.envs[0].frameworks[0].requires_nvidia.empty());
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{site + "/torch-2.5.1.dist-info/METADATA", "Permission denied"}));
  EXPECT_EQ(u[1], (snapshot::Unreadable{"/home/u/venv/conda-meta", "Permission denied"}));
}

TEST(PythonProbe, AnUnlistableSitePackagesIsRecorded) {
  sys::FakeSys s;
  s.set_env("VIRTUAL_ENV", "/home/u/venv");
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  s.dir(site).fail(site, "Permission denied");
  Context ctx(s, {});
  probe_python(ctx, {});
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{site, "Permission denied"}));
}

TEST(PythonProbe, OnnxRuntimesCudaIsWhatItsProviderLinksElseUnknown) {
  sys::FakeSys s;
  s.set_env("VIRTUAL_ENV", "/home/u/venv");
  const std::string site = "/home/u/venv/lib/python3.11/site-packages";
  s.dir(site + "/onnxruntime_gpu-1.19.2.dist-info");
  s.file(site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so", "not an ELF file");
  const auto py = python_of(s);
  ASSERT_EQ(py.envs.at(0).frameworks.size(), 1u);
  const auto& fw = py.envs[0].frameworks[0];
  EXPECT_EQ(fw.name, "onnxruntime");
  EXPECT_EQ(fw.version, "1.19.2");
  EXPECT_EQ(fw.cuda, "") << "no file names it, and the provider could not be resolved";
  EXPECT_TRUE(fw.cuda_unknown);
  EXPECT_FALSE(fw.error.empty());

  snapshot::Framework linked;
  linked.missing = {"libcublasLt.so.12", "libcudart.so.12"};
  EXPECT_EQ(linked_cuda_major(linked), "12");
  linked.missing = {"libcufft.so.10"};
  linked.libraries = {{"libcudart.so.11.0", "/x/libcudart.so.11.0", "DT_RUNPATH", "", ""}};
  EXPECT_EQ(linked_cuda_major(linked), "11");
  linked.libraries.clear();
  EXPECT_EQ(linked_cuda_major(linked), "") << "cuFFT's major is not CUDA's";
}

}  // namespace cudoctor::probe
