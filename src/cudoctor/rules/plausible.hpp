#pragma once
// Values no real NVIDIA library reports: a garbled reply, a broken or foreign library. Each
// returns "what: value" lines naming what cannot be true, empty when all is plausible.
#include <string>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::rules {

// A CUDA version in cuda.h's encoding (1000 * major + 10 * minor), 0 meaning not reported.
bool plausible_cuda_version(int encoded);
// A compute capability "M.m"; "" (not reported) is plausible.
bool plausible_compute_capability(const std::string& cc);

// NVML's answer after nvmlInit succeeded: versions, GPU count (against the PCI bus when it
// was listed: pci_gpus >= 0) and each GPU's compute capability.
std::vector<std::string> implausible_nvml(const snapshot::NvmlFacts& nvml,
                                          const std::vector<const snapshot::NvmlGpu*>& gpus, int pci_gpus);
// The driver API's answer after cuInit succeeded.
std::vector<std::string> implausible_driver_api(const snapshot::DriverApiFacts& d);
// A CUDA runtime's answer.
std::vector<std::string> implausible_cudart(const snapshot::CudartFacts& c);

}  // namespace cudoctor::rules
