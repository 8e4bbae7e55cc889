// How fast `cudoctor explain` reads a large log: 10 MB of training output with the corpus's
// real error logs scattered through it (one log in 500 lines), read, matched and ranked.
// Reported, not asserted. The peak memory of the whole command on the same log is measured
// with /usr/bin/time (see the closing notes): the reader keeps no line it does not match.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cudoctor/explain/explain.hpp"
#include "cudoctor/kb/kb.hpp"

namespace fs = std::filesystem;
using namespace cudoctor;

namespace {

const std::string& ten_megabytes() {
  static const std::string log = [] {
    std::vector<std::string> logs;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(CUDOCTOR_SOURCE_DIR) / "tests/explain/corpus")) {
      if (e.path().extension() != ".log") continue;
      std::ifstream in(e.path());
      std::stringstream s;
      s << in.rdbuf();
      logs.push_back(s.str());
    }
    const char* filler[] = {
        "Epoch 3/100: 45%|#####     | 4500/10000 [01:23<01:41, 54.2it/s, loss=0.3412]",
        "2024-05-01 12:00:01,123 - INFO - trainer.py:210 - step 4500 loss 0.3412 lr 3.0e-4",
        "I0000 00:00:1711000000.123456    4242 service.cc:145] XLA service 0x55d5 initialized for platform CUDA",
        "[rank0]: batch 4500 took 0.123 s",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1518, in _call_impl",
        "    return self._call_impl(*args, **kwargs)"};
    std::mt19937 rng(1);
    std::string out;
    while (out.size() < 10'000'000) {
      if (rng() % 500 == 0 && !logs.empty())
        out += logs[rng() % logs.size()];
      else
        out += filler[rng() % std::size(filler)];
      out += '\n';
    }
    return out;
  }();
  return log;
}

void BM_ExplainTenMegabytes(benchmark::State& state) {
  const auto& log = ten_megabytes();
  const auto& lib = explain::builtin_library();
  const auto matcher = explain::Matcher::compile(lib);
  for (auto _ : state) {
    explain::Reading r;
    explain::Batch batch(*matcher, r);
    explain::LogReader reader([&](explain::Line&& l) { batch.add(std::move(l)); });
    for (std::size_t i = 0; i < log.size(); i += 1 << 20) reader.feed(std::string_view(log).substr(i, 1 << 20));
    reader.finish();
    batch.flush();
    r.stats = reader.stats();
    auto ex = explain::explain(std::move(r), lib, kb::builtin(), nullptr);
    benchmark::DoNotOptimize(ex);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_ExplainTenMegabytes)->Unit(benchmark::kMillisecond);

void BM_ReadTenMegabytesWithoutMatching(benchmark::State& state) {
  const auto& log = ten_megabytes();
  for (auto _ : state) {
    std::size_t n = 0;
    explain::LogReader reader([&](const explain::Line& l) { n += l.text.size(); });
    reader.feed(log);
    reader.finish();
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_ReadTenMegabytesWithoutMatching)->Unit(benchmark::kMillisecond);

void BM_CompileSignatures(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(explain::Matcher::compile(explain::builtin_library()));
}
BENCHMARK(BM_CompileSignatures)->Unit(benchmark::kMillisecond);

}  // namespace
