#pragma once
// Reports as `cudoctor --json` writes them, made from the real H200 snapshot (snapshots.hpp)
// judged by the real rules and written by the real renderer: one per node, each with its own
// host name, GPU UUID and the readings that change from minute to minute, and the faults a
// test plants.
#include <string>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"
#include "snapshots.hpp"

namespace cudoctor::testing {

// The H200 machine as node `host`: what differs between two healthy nodes of one cluster
// (host name, UUID, temperatures, clocks, utilisation, memory in use, timings) set from seed.
inline snapshot::Snapshot h200_node(const std::string& host, int seed) {
  auto s = h200_snapshot();
  s.host.hostname = host;
  for (auto& g : s.gpus) {
    if (!g.nvml) continue;
    g.nvml->uuid = "GPU-" + std::to_string(100000 + seed) + "-b844-0e99-c9cf-e90c0ed5f21b";
    g.nvml->temperature_c = 30 + seed % 40;
    g.nvml->utilization_gpu_pct = seed % 100;
    g.nvml->memory_used_bytes = (600ull + static_cast<unsigned>(seed % 500)) << 20;
    g.nvml->power_draw_w = 100 + seed % 500;
    g.nvml->clock_sm_mhz = 1500 + seed % 480;
  }
  s.driver.nvml.outcome.seconds = 0.02 + (seed % 10) * 0.001;
  for (auto& c : s.runtime.compute) {
    c.outcome.seconds = 1.2 + (seed % 10) * 0.01;
    for (auto& k : c.copies) k.gb_per_s *= 1.0 + (seed % 7) * 0.002;
    for (auto& g : c.gemms) g.tflops *= 1.0 + (seed % 5) * 0.003;
  }
  return s;
}

// Fault: the container image carries its own libcuda 570 (driver-version-mismatch, L1).
inline snapshot::Snapshot with_baked_libcuda(snapshot::Snapshot s) {
  for (auto& l : s.driver.libraries)
    if (l.soname == "libcuda.so.1") {
      l.version = "570.124.06";
      l.path = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
      l.real_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.570.124.06";
    }
  return s;
}

// Fault: a GEMM that came back wrong on this GPU (gemm-wrong-result, L5): the set-up is the
// same as its neighbours', the hardware is not.
inline snapshot::Snapshot with_wrong_gemm(snapshot::Snapshot s) {
  s.runtime.compute[0].gemms[1].passed = false;
  s.runtime.compute[0].gemms[1].max_abs_error = 0.5;
  return s;
}

// Fault: torch's libcublas.so.13 is gone from the environment (framework-library-missing, L3).
inline snapshot::Snapshot with_torch_lacking_cublas(snapshot::Snapshot s) {
  for (auto& e : s.python.envs)
    for (auto& f : e.frameworks)
      if (f.name == "torch") {
        std::erase_if(f.libraries, [](const auto& l) { return l.soname == "libcublas.so.13"; });
        f.missing.push_back("libcublas.so.13");
      }
  return s;
}

// The snapshot judged and written as `cudoctor --json` writes it.
inline std::string report_text(snapshot::Snapshot s) {
  const auto rep = report::build(std::move(s), kb::builtin());
  render::Options o;
  o.tool_version = "0.1.0";
  return render::json(rep, o);
}

}  // namespace cudoctor::testing
