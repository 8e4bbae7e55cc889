// The libraries TensorFlow opens at run time (its dso_loader), not through DT_NEEDED: resolved as
// dlopen from libtensorflow_framework.so.2 would, through its RUNPATH into the nvidia/* wheels.
// A venv with TensorFlow 2.15.1 (CUDA 12.2, cuDNN 8) whose wheels lack cuDNN.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/machines.hpp"
#include "../support/scenario.hpp"
#include "../support/venvs.hpp"

namespace cudoctor::testing {
namespace {

const std::string k_site = "/home/u/venv/lib/python3.11/site-packages";

// Real shared objects with the given sonames, as the nvidia-* wheels lay them out.
void add_wheel_library(FixtureRoot& r, const std::string& dir, const std::string& soname) {
  std::filesystem::create_directories(r.host(k_site + "/nvidia/" + dir + "/lib"));
  std::ofstream(r.host("/f.c")) << "int f(void) { return 0; }\n";
  run_sh("cc -shared -fPIC '" + r.host("/f.c").string() + "' -Wl,-soname," + soname + " -o '" +
         r.host(k_site + "/nvidia/" + dir + "/lib/" + soname).string() + "'");
}

// What the wheels of tensorflow[and-cuda] 2.15 hold: each CUDA library, cuDNN 8 with its
// sub-libraries beside it (unless with_cudnn_parts is false), NCCL and CUPTI (unless with_cupti is false).
void build_tensorflow_venv(FixtureRoot& r, bool with_cudnn, bool with_cudnn_parts = true, bool with_cupti = true) {
  namespace fs = std::filesystem;
  for (const char* p : {"/usr/bin/python3", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"})
    if (fs::exists(p)) r.copy(p, fs::canonical(p));
  r.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n");
  r.link("/home/u/venv/bin/python3", "/usr/bin/python3");
  // build_info.py as TensorFlow 2.15's wheel writes it.
  r.file(k_site + "/tensorflow/python/platform/build_info.py",
         "# Copyright 2020 The TensorFlow Authors. All Rights Reserved.\n"
         "\"\"\"Auto-generated module providing information about the build.\"\"\"\nimport collections\n\n"
         "build_info = collections.OrderedDict()\n"
         "build_info['cpu_compiler'] = '/usr/lib/llvm-17/bin/clang'\n"
         "build_info['cuda_compute_capabilities'] = ['sm_50', 'sm_60', 'sm_70', 'sm_80', 'compute_90']\n"
         "build_info['cuda_version'] = '12.2'\nbuild_info['cudnn_version'] = '8'\n"
         "build_info['is_cuda_build'] = True\nbuild_info['is_rocm_build'] = False\n"
         "build_info['is_tensorrt_build'] = True\n");
  r.file(k_site + "/tensorflow-2.15.1.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.15.1\n");
  add_wheel_library(r, "cuda_runtime", "libcudart.so.12");
  add_wheel_library(r, "cublas", "libcublas.so.12");
  add_wheel_library(r, "cublas", "libcublasLt.so.12");
  add_wheel_library(r, "cufft", "libcufft.so.11");
  add_wheel_library(r, "cusolver", "libcusolver.so.11");
  add_wheel_library(r, "cusparse", "libcusparse.so.12");
  if (with_cudnn) add_wheel_library(r, "cudnn", "libcudnn.so.8");
  if (with_cudnn && with_cudnn_parts)
    for (const char* part : {"ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"})
      add_wheel_library(r, "cudnn", std::string("libcudnn_") + part + ".so.8");
  add_wheel_library(r, "nccl", "libnccl.so.2");
  if (with_cupti) add_wheel_library(r, "cuda_cupti", "libcupti.so.12");
  // libtensorflow_framework.so.2: needs none of them, finds them by its RUNPATH at dlopen time.
  std::string runpath;
  for (const char* d : {"cuda_runtime", "cublas", "cufft", "cusolver", "cusparse", "cudnn", "nccl", "cuda_cupti"})
    runpath += std::string(runpath.empty() ? "" : ":") + "\\$ORIGIN/../nvidia/" + d + "/lib";
  run_sh("bash -c \"cc -shared -fPIC '" + r.host("/f.c").string() + "' -o '" +
         r.host(k_site + "/tensorflow/libtensorflow_framework.so.2").string() + "' -Wl,--enable-new-dtags,-rpath,'" +
         runpath + "'\"");
}

TEST(ScenarioTensorflow, Tf215WithoutLibcudnn8IsAnErrorNamingTheAndCudaExtra) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  build_tensorflow_venv(r, false);
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  const auto f = c.finding("framework-library-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(c.report["verdict"]["break_finding"], "framework-library-missing") << c.ids();
  EXPECT_TRUE(contains(f["title"].get<std::string>(), "opens libcudnn.so.8 at run time, which the loader cannot find"))
      << f["title"];
  EXPECT_TRUE(contains(joined_evidence(f),
                       "libcudnn.so.8: opened at run time by /home/u/venv/lib/python3.11/site-packages/"
                       "tensorflow/libtensorflow_framework.so.2, not found"))
      << joined_evidence(f);
  ASSERT_EQ(f["fix"]["commands"].size(), 1u) << f["fix"];
  EXPECT_EQ(f["fix"]["commands"][0], "/home/u/venv/bin/python3 -m pip install \"tensorflow[and-cuda]==2.15.*\"");
  EXPECT_EQ(f["fix"]["checks"][0], "ldconfig -p | grep libcudnn.so.8");
  // The others were found through the RUNPATH, as TensorFlow's own dlopen finds them.
  const auto& env = c.report["python"]["envs"][0];
  const auto& tf = env["frameworks"][0];
  EXPECT_EQ(tf["name"], "tensorflow");
  EXPECT_EQ(tf["missing"], nlohmann::json::array({"libcudnn.so.8"}));
  bool cufft = false;
  for (const auto& l : tf["libraries"])
    cufft = cufft || (l["soname"] == "libcufft.so.11" && l["rule"] == "DT_RUNPATH" &&
                      l["path"] == k_site + "/tensorflow/../nvidia/cufft/lib/libcufft.so.11");
  EXPECT_TRUE(cufft) << tf["libraries"];
}

TEST(ScenarioTensorflow, Tf215WithItsWheelsIsFound) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  build_tensorflow_venv(r, true);
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  EXPECT_FALSE(c.has("framework-library-missing")) << c.ids();
  EXPECT_TRUE(c.has("framework-found")) << c.ids();
  EXPECT_FALSE(c.has("framework-library-optional-missing")) << c.ids();
  // cuDNN's sub-libraries are in the model of what is opened at run time, found beside libcudnn.so.8.
  const auto& tf = c.report["python"]["envs"][0]["frameworks"][0];
  bool cnn = false;
  for (const auto& o : tf["opened"])
    cnn = cnn ||
          (o["soname"] == "libcudnn_cnn_infer.so.8" && o["opener"].get<std::string>().ends_with("/libcudnn.so.8") &&
           o["path"].get<std::string>().ends_with("/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8"));
  EXPECT_TRUE(cnn) << tf["opened"];
}

TEST(ScenarioTensorflow, CudnnWithoutItsSubLibrariesIsAnErrorNamingThem) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  build_tensorflow_venv(r, true, false);
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  const auto f = c.finding("framework-library-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_TRUE(contains(f["title"].get<std::string>(),
                       "opens libcudnn_ops_infer.so.8, libcudnn_ops_train.so.8, "
                       "libcudnn_cnn_infer.so.8"))
      << f["title"];
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "cuDNN cannot load its own sub-libraries")) << f["detail"];
  EXPECT_TRUE(contains(joined_evidence(f), "libcudnn_cnn_infer.so.8: opened at run time by " + k_site +
                                               "/tensorflow/../nvidia/cudnn/lib/libcudnn.so.8, not found"))
      << joined_evidence(f);
  ASSERT_EQ(f["fix"]["commands"].size(), 1u) << f["fix"];
  EXPECT_EQ(f["fix"]["commands"][0], "/home/u/venv/bin/python3 -m pip install \"tensorflow[and-cuda]==2.15.*\"");
}

TEST(ScenarioTensorflow, MissingCuptiIsAWarningForProfilingOnly) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_rtx4060_laptop(r);
  ASSERT_TRUE(add_device_nodes(r, 1));
  build_tensorflow_venv(r, true, true, false);
  const auto c = check_root(r, {"--no-runtime"}, k_activated_venv);
  EXPECT_FALSE(c.has("framework-library-missing")) << c.ids();
  const auto f = c.finding("framework-library-optional-missing");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "warn");
  EXPECT_TRUE(contains(f["title"].get<std::string>(),
                       "opens libcupti.so.12 at run time, which the loader cannot "
                       "find: CUPTI will fail"))
      << f["title"];
  EXPECT_TRUE(contains(f["detail"].get<std::string>(), "profiling (CUPTI)")) << f["detail"];
  EXPECT_TRUE(c.has("framework-found")) << c.ids();
}

}  // namespace
}  // namespace cudoctor::testing
