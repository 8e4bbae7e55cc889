#pragma once
// L4 and L5 probes: the CUDA driver API, each CUDA runtime, and a checked computation, each
// run in a child process (run_in_child) against libraries given by host path. A crash,
// hang or exit of a vendor library becomes the ChildOutcome of the facts returned.
#include <chrono>
#include <string>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::runtime {

// cuDriverGetVersion, cuInit, the devices and a context on each.
snapshot::DriverApiFacts probe_driver_api(const std::string& libcuda, std::chrono::milliseconds timeout);

// A libcudart over the given libcuda (preloaded so the runtime binds to it; "" for none):
// versions, device count, cudaSetDevice(0).
snapshot::CudartFacts probe_cudart(const std::string& cudart, const std::string& libcuda,
                                   std::chrono::milliseconds timeout);

// On one device: copies both ways (pageable, pinned) compared byte for byte, and cuBLAS
// GEMMs (fp32; fp16 from cc 5.3; bf16 from cc 8.0) checked against a CPU product.
struct ComputeSizes {
  std::size_t copy_bytes = 64u << 20;
  int check_n = 256;       // n of the n x n x n product checked against the CPU
  int throughput_n = 4096; // n of the product timed
};
snapshot::ComputeCheck run_compute(const std::string& libcuda, const std::string& cudart, const std::string& cublas,
                                   int device, int cc_major, int cc_minor, const ComputeSizes& sizes,
                                   std::chrono::milliseconds timeout);

}  // namespace cudoctor::runtime
