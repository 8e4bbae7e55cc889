// The L3 scan of a Python environment that holds a full CUDA PyTorch install: thousands of
// files, the GPU library with a real fatbin, the nvidia-* wheels; and of a machine with
// thousands of conda environments or pyenv versions. Reported, not asserted.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
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
    std::ofstream(site / "torch/version.py")
        << "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip = None\n";
    // A full install's thousands of Python files, in many packages.
    for (int d = 0; d < 60; ++d) {
      const auto dir = site / fmt::format("torch/pkg{}", d);
      fs::create_directories(dir);
      for (int f = 0; f < 60; ++f) std::ofstream(dir / fmt::format("m{}.py", f)) << "x = 1\n";
    }
    std::ofstream(r / "f.c") << "int f(void) { return 0; }\n";
    std::string libs;
    for (const auto* c : {"cuda_runtime:libcudart.so.12", "cublas:libcublas.so.12", "cudnn:libcudnn.so.9",
                          "nccl:libnccl.so.2", "cufft:libcufft.so.11", "cusparse:libcusparse.so.12",
                          "curand:libcurand.so.10", "nvjitlink:libnvJitLink.so.12"}) {
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
    std::system(
        ("cc -shared -fPIC -o '" + lib + "' '" + (r / "f.c").string() + "' -Wl,--no-as-needed" + libs +
         " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cublas/lib'")
            .c_str());
    if (fs::exists("/usr/local/cuda-13.0/bin/nvcc")) {
      std::ofstream(r / "k.cu") << "__global__ void k(float* x) { x[0] = 1.0f; }\n";
      std::system(("/usr/local/cuda-13.0/bin/nvcc -fatbin -o '" + (r / "k.fatbin").string() + "' '" +
                   (r / "k.cu").string() +
                   "' -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 && objcopy --add-section "
                   ".nv_fatbin='" +
                   (r / "k.fatbin").string() + "' '" + lib + "'")
                      .c_str());
    }
    return r;
  }();
  return root;
}

// A root with n conda environments (each with conda-meta, listed in ~/.conda/environments.txt
// and under /opt/conda/envs), or n pyenv versions (each with a site-packages), written once.
fs::path many_envs(const std::string& kind, int n) {
  const fs::path r = fs::temp_directory_path() / fmt::format("cudoctor-bench-py-{}-{}-{}", ::getpid(), kind, n);
  if (fs::exists(r)) return r;
  if (kind == "conda") {
    fs::create_directories(r / "root/.conda");
    std::ofstream list(r / "root/.conda/environments.txt");
    for (int i = 0; i < n; ++i) {
      fs::create_directories(r / fmt::format("opt/conda/envs/e{}/conda-meta", i));
      list << fmt::format("/opt/conda/envs/e{}\n", i);
    }
  } else {
    for (int i = 0; i < n; ++i)
      fs::create_directories(r / fmt::format("root/.pyenv/versions/v{}/lib/python3.11/site-packages", i));
  }
  return r;
}

// Removes the trees when the benchmark program ends.
struct Cleanup {
  ~Cleanup() {
    std::error_code ec;
    fs::remove_all(torch_env(), ec);
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec))
      if (e.path().filename().string().starts_with(fmt::format("cudoctor-bench-py-{}-", ::getpid())))
        fs::remove_all(e.path(), ec);
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

// probe_python over a root holding state.range(0) environments of one kind, HOME=/root.
void scan_many(benchmark::State& state, const std::string& kind) {
  static Cleanup cleanup;
  const auto root = many_envs(kind, static_cast<int>(state.range(0)));
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  ::setenv("HOME", "/root", 1);
  const auto sys = sys::make_root_sys(root.string());
  probe::Options o;
  std::size_t envs = 0, cut = 0;
  for (auto _ : state) {
    probe::Context ctx(*sys, o);
    const auto facts = probe::probe_python(ctx, {});
    envs = facts.envs.size();
    cut = facts.lists_cut.size();
  }
  state.counters["envs_inspected"] = static_cast<double>(envs);
  state.counters["lists_cut"] = static_cast<double>(cut);
  if (old_home)
    ::setenv("HOME", saved.c_str(), 1);
  else
    ::unsetenv("HOME");
}

void BM_L3ManyCondaEnvironments(benchmark::State& state) {
  scan_many(state, "conda");
}
void BM_L3ManyPyenvVersions(benchmark::State& state) {
  scan_many(state, "pyenv");
}

}  // namespace

BENCHMARK(BM_L3ScanOfTorchEnvironment)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L3ManyCondaEnvironments)
    ->Arg(1000)
    ->Arg(2000)
    ->Arg(10000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_L3ManyPyenvVersions)
    ->Arg(1000)
    ->Arg(2000)
    ->Arg(10000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
