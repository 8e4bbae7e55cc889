#pragma once
// L4 and L5 probes: the CUDA driver API, each CUDA runtime, and a checked computation, each
// run in a child process (run_in_child) against libraries given by host path. A crash,
// hang or exit of a vendor library becomes the ChildOutcome of the facts returned.
#include <chrono>
#include <string>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::runtime {

// The child-side work of the L4 probes, for run_in_children; each reply parses with
// parse_reply<DriverApiFacts> or parse_reply<CudartFacts>.
// cuDriverGetVersion, cuInit, the devices and a context on each.
std::string driver_api_child(const std::string& libcuda);
// A libcudart over the given libcuda (preloaded so the runtime binds to it; "" for none):
// versions, device count, cudaSetDevice(0).
std::string cudart_child(const std::string& cudart, const std::string& libcuda);

// On one device: copies both ways (pageable, pinned) compared byte for byte, and cuBLAS
// GEMMs (fp32; fp16 from cc 5.3; bf16 from cc 8.0) checked against a CPU product.
struct ComputeSizes {
  std::size_t copy_bytes = 64u << 20;
  int check_n = 256;        // n of the n x n x n product checked against the CPU
  int throughput_n = 4096;  // n of the product timed
};
// One device's computation check and the libraries for it (host paths).
struct ComputeJob {
  std::string libcuda;
  std::string cudart;
  std::string cublas;  // "" for no GEMMs
  int device = 0;
  int cc_major = 0;
  int cc_minor = 0;
};

// Every device at once, each in its own child, under one deadline. The copies are timed one
// GPU at a time (GPUs can share a PCIe switch and host memory): a child waits for its turn
// at most half the time it has, then copies anyway with copies_timed_alone false.
std::vector<snapshot::ComputeCheck> run_compute(const std::vector<ComputeJob>& jobs, const ComputeSizes& sizes,
                                                std::chrono::milliseconds timeout);

}  // namespace cudoctor::runtime
