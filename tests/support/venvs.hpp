#pragma once
// Python environments as pip, venv and conda lay them out, with real ELF libraries compiled by
// the tests (DT_RUNPATH $ORIGIN, as PyTorch's wheels link), and a GPU with its driver for the
// rules to compare them with.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "machines.hpp"

namespace cudoctor::testing {

// Runs a shell command line; a test failure when it does not exit 0.
inline void run_sh(const std::string& cmd) {
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// The environment of a shell with build_venv's venv (at its default prefix) activated.
inline const std::map<std::string, std::string> k_activated_venv = {{"PATH", "/home/u/venv/bin:/usr/bin:/bin"},
                                                                    {"VIRTUAL_ENV", "/home/u/venv"}};

// Where a venv lives and which Python made it.
struct VenvLayout {
  std::string prefix = "/home/u/venv";
  std::string python = "3.11";  // lib/python<this>/site-packages, pyvenv.cfg's version
  bool system_site_packages = false;
};

// A venv whose torch (CUDA `cuda`, "None" for a CPU-only build) needs libcudart.so.12,
// libcublas.so.12 and libcudnn.so.9 from the bundled nvidia/* wheels (DT_RUNPATH
// $ORIGIN/../../nvidia/*/lib), with cuDNN's sub-libraries and the libnvrtc.so.12 it opens at run time, and, when this
// machine has nvcc 13, carries cubins for sm_80 and sm_90 only. The nvidia-cudnn-cu12 9.1.0.70 wheel's dist-info is
// there too.
inline void build_venv(FixtureRoot& r, const std::string& cuda, const std::string& hip = "None",
                       const VenvLayout& at = {}) {
  namespace fs = std::filesystem;
  // The system's interpreter the venv points at, and the C library its libraries need.
  for (const char* p : {"/usr/bin/python3", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"})
    if (fs::exists(p)) r.copy(p, fs::canonical(p));
  const std::string venv = at.prefix;
  const std::string site = venv + "/lib/python" + at.python + "/site-packages";
  r.file(venv + "/pyvenv.cfg",
         "home = /usr/bin\ninclude-system-site-packages = " + std::string(at.system_site_packages ? "true" : "false") +
             "\nversion = " + at.python + ".2\n");
  r.link(venv + "/bin/python3", "/usr/bin/python3");
  r.file(site + "/torch/version.py",
         "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
         "__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = " +
             (cuda == "None" ? cuda : "'" + cuda + "'") +
             "\ngit_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = " +
             (hip == "None" ? hip : "'" + hip + "'") + "\n");
  r.file(
      site + "/torch-2.5.1.dist-info/METADATA",
      "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\nRequires-Dist: filelock\n"
      "Requires-Dist: nvidia-cuda-runtime-cu12==12.4.127; platform_system == \"Linux\" and platform_machine == "
      "\"x86_64\"\n"
      "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n");
  r.file(site + "/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA", "Name: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n");
  const auto host = [&](const std::string& p) { return r.host(p).string(); };
  std::ofstream(host("/f.c")) << "int f(void) { return 0; }\n";
  const std::string cc = "cc -shared -fPIC '" + host("/f.c") + "' ";
  for (const auto& [dir, soname] :
       std::vector<std::pair<std::string, std::string>>{{"nvidia/cuda_runtime/lib", "libcudart.so.12"},
                                                        {"nvidia/cublas/lib", "libcublas.so.12"},
                                                        {"nvidia/cudnn/lib", "libcudnn.so.9"},
                                                        {"nvidia/cuda_nvrtc/lib", "libnvrtc.so.12"}}) {
    fs::create_directories(host(site + "/" + dir));
    run_sh("bash -c \"" + cc + "-Wl,-soname," + soname + " -o '" + host(site + "/" + dir + "/" + soname) + "'\"");
  }
  // cuDNN 9's sub-libraries, which libcudnn.so.9 opens at run time, beside it as the wheel has them.
  for (const char* part :
       {"graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"})
    run_sh("bash -c \"" + cc + "-Wl,-soname,libcudnn_" + part + ".so.9 -o '" +
           host(site + "/nvidia/cudnn/lib/libcudnn_") + part + ".so.9'\"");
  fs::create_directories(host(site + "/torch/lib"));
  const auto lib = host(site + "/torch/lib/libtorch_cuda.so");
  run_sh("bash -c \"" + cc + "-o '" + lib + "' -Wl,--no-as-needed '" +
         host(site + "/nvidia/cuda_runtime/lib/libcudart.so.12") + "' '" +
         host(site + "/nvidia/cublas/lib/libcublas.so.12") + "' '" + host(site + "/nvidia/cudnn/lib/libcudnn.so.9") +
         "' "
         "-Wl,--enable-new-dtags,-rpath,'\\$ORIGIN/../../nvidia/cuda_runtime/lib:\\$ORIGIN/../../nvidia/cublas/"
         "lib:\\$ORIGIN/../../nvidia/cudnn/lib:\\$ORIGIN/../../nvidia/cuda_nvrtc/lib'\"");
  // The kernels: a fatbin for sm_80 and sm_90, in the library's .nv_fatbin section.
  const auto nvcc = std::string("/usr/local/cuda-13.0/bin/nvcc");
  if (fs::exists(nvcc)) {
    std::ofstream(host("/k.cu")) << "__global__ void k(float* x) { x[0] = 1.0f; }\n";
    run_sh(nvcc + " -fatbin -o '" + host("/k.fatbin") + "' '" + host("/k.cu") +
           "' -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 > /dev/null");
    run_sh("objcopy --add-section .nv_fatbin='" + host("/k.fatbin") + "' '" + lib + "'");
  }
}

// A shared library with this soname at a logical path, compiled from a one-line C file.
inline void add_shared_library(FixtureRoot& r, const std::string& logical, const std::string& soname) {
  std::filesystem::create_directories(r.host(logical).parent_path());
  std::ofstream(r.host("/g.c")) << "int g(void) { return 0; }\n";
  run_sh("cc -shared -fPIC '" + r.host("/g.c").string() + "' -Wl,-soname," + soname + " -o '" +
         r.host(logical).string() + "'");
}

// A machine whose GPU (by PCI id) is bound to the nvidia module of this version, with the
// (simulated) user-space driver of the same version.
inline void add_gpu(FixtureRoot& r, unsigned device, const std::string& driver) {
  add_pci(r, {.address = "0000:01:00.0", .device = device, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, driver);
  add_driver_libraries(r, driver, nvml_sim_library());
}

}  // namespace cudoctor::testing
