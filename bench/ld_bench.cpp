// Resolving every shared library under /usr/lib/x86_64-linux-gnu and the CUDA toolkit: in one
// cudoctor process (the resolver reuses what it parsed), against running glibc's ld.so
// --list once per file as ldd does. Reported, not asserted.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/sys/root_sys.hpp"

extern char** environ;
namespace fs = std::filesystem;
using namespace cudoctor;

namespace {

const std::vector<std::string>& libraries() {
  static const auto files = [] {
    std::vector<std::string> out;
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/local/cuda-13.0/lib"}) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        const auto name = e.path().filename().string();
        if (name.find(".so") == std::string::npos || e.is_symlink() || !e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        char magic[4] = {};
        in.read(magic, 4);
        if (magic[0] == 0x7f && magic[1] == 'E') out.push_back(e.path().string());
      }
    }
    return out;
  }();
  return files;
}

void BM_CudoctorResolvesAll(benchmark::State& state) {
  const auto sys = sys::make_root_sys("/");
  for (auto _ : state) {
    ld::Resolver r(*sys, ld::discover_config(*sys, ""));
    std::size_t objects = 0;
    for (const auto& f : libraries())
      if (auto t = r.load(f)) objects += t->objects.size();
    benchmark::DoNotOptimize(objects);
  }
  state.counters["files"] = static_cast<double>(libraries().size());
}

void BM_LdSoListEach(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& f : libraries()) {
      const char* argv[] = {"/lib64/ld-linux-x86-64.so.2", "--list", f.c_str(), nullptr};
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
      posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
      pid_t pid = 0;
      if (posix_spawn(&pid, argv[0], &fa, nullptr, const_cast<char* const*>(argv), environ) == 0)
        waitpid(pid, nullptr, 0);
      posix_spawn_file_actions_destroy(&fa);
    }
  }
  state.counters["files"] = static_cast<double>(libraries().size());
}

}  // namespace

BENCHMARK(BM_CudoctorResolvesAll)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_LdSoListEach)->Unit(benchmark::kMillisecond)->Iterations(1);
