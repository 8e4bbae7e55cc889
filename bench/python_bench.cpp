// The L3 scan of a Python environment that holds a full CUDA PyTorch install: thousands of
// files, the GPU library with a real fatbin, the nvidia-* wheels. Reported, not asserted.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/root_sys.hpp"

namespace fs = std::filesystem;
using namespace cudoctor;

namespace {

fs::path torch_env() {
  static const fs::path root = [] {
    const fs::path r = fs::temp_directory_path() / fmt::format("cudoctor-bench-py-{}", ::getpid());
    const auto site = r / "venv/lib/python3.11/site-packages";
    fs::create_directories(site / "torch/lib");
    std::ofstream(r / "venv/pyvenv.cfg") << "home = /usr/bin\nversion = 3.11.2\n";
    std::ofstream(site / "torch/version.py") << "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip = None\n";
    // A full install's thousands of Python files, in many packages.
    for (int d = 0; d < 60; ++d) {
      const auto dir = site / fmt::format("torch/pkg{}", d);
      fs::create_directories(dir);
      for (int f = 0; f < 60; ++f) std::ofstream(dir / fmt::format("m{}.py", f)) << "x = 1\n";
    }
    std::ofstream(r / "f.c") << "int f(void) { return 0; }\n";
    std::string libs;
    for (const auto* c : {"cuda_runtime:libcudart.so.12", "cublas:libcublas.so.12", "cudnn:libcudnn.so.9", "nccl:libnccl.so.2",
                          "cufft:libcufft.so.11", "cusparse:libcusparse.so.12", "curand:libcurand.so.10", "nvjitlink:libnvJitLink.so.12"}) {
      const std::string s = c;
      const auto comp = s.substr(0, s.find(':')), so = s.substr(s.find(':') + 1);
      fs::create_directories(site / "nvidia" / comp / "lib");
      const auto out = (site / "nvidia" / comp / "lib" / so).string();
      std::system(("cc -shared -fPIC -o '" + out + "' '" + (r / "f.c").string() + "' -Wl,-soname," + so).c_str());
      libs += " '" + out + "'";
    }
    for (int i = 0; i < 12; ++i) {
      const auto out = (site / "torch/lib" / fmt::format("libpart{}.so", i)).string();
      std::system(("cc -shared -fPIC -o '" + out + "' '" + (r / "f.c").string() + "'").c_str());
    }
    const auto lib = (site / "torch/lib/libtorch_cuda.so").string();
    std::system(("cc -shared -fPIC -o '" + lib + "' '" + (r / "f.c").string() + "' -Wl,--no-as-needed" + libs +
                 " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cublas/lib'")
                    .c_str());
    if (fs::exists("/usr/local/cuda-13.0/bin/nvcc")) {
      std::ofstream(r / "k.cu") << "__global__ void k(float* x) { x[0] = 1.0f; }\n";
      std::system(("/usr/local/cuda-13.0/bin/nvcc -fatbin -o '" + (r / "k.fatbin").string() + "' '" + (r / "k.cu").string() +
                   "' -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 && objcopy --add-section "
                   ".nv_fatbin='" + (r / "k.fatbin").string() + "' '" + lib + "'").c_str());
    }
    return r;
  }();
  return root;
}

// Removes the tree when the benchmark program ends.
struct Cleanup {
  ~Cleanup() {
    std::error_code ec;
    fs::remove_all(torch_env(), ec);
  }
};

void BM_L3ScanOfTorchEnvironment(benchmark::State& state) {
  static Cleanup cleanup;
  const auto sys = sys::make_root_sys("/");
  probe::Options o;
  o.pythons = {(torch_env() / "venv/bin/python3").string()};
  std::size_t frameworks = 0;
  for (auto _ : state) {
    probe::Context ctx(*sys, o);
    const auto facts = probe::probe_python(ctx, o.pythons);
    for (const auto& e : facts.envs) frameworks += e.frameworks.size();
  }
  benchmark::DoNotOptimize(frameworks);
}

}  // namespace

BENCHMARK(BM_L3ScanOfTorchEnvironment)->Unit(benchmark::kMillisecond);
