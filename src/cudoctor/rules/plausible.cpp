#include "cudoctor/rules/plausible.hpp"

#include <fmt/format.h>

#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {
namespace {

// CUDA majors run 1 to 13 so far (2007-2025); 99 leaves decades of room and still rejects
// garbage such as INT_MIN or 1e6.
constexpr int k_max_cuda_major = 99;
// Compute capability majors run 1 to 12 so far (Blackwell GeForce is 12.0) and rise about
// one a generation, every two years; minors have never passed 9.
constexpr int k_max_cc_major = 20;
constexpr int k_max_cc_minor = 9;

std::string encoded(int v) {
  return fmt::format("{} (CUDA {})", v, util::cuda_version_string(v));
}

}  // namespace

bool plausible_cuda_version(int v) {
  return v == 0 || (v >= 1000 && v < (k_max_cuda_major + 1) * 1000);
}

bool plausible_compute_capability(const std::string& cc) {
  if (cc.empty()) return true;
  const auto v = util::Version::parse(cc);
  return v && v->parts.size() == 2 && v->major() >= 1 && v->major() <= k_max_cc_major && v->minor() >= 0 &&
         v->minor() <= k_max_cc_minor;
}

std::vector<std::string> implausible_nvml(const snapshot::NvmlFacts& n,
                                          const std::vector<const snapshot::NvmlGpu*>& gpus, int pci_gpus) {
  std::vector<std::string> out;
  if (!n.driver_version.empty()) {
    const auto v = util::Version::parse(n.driver_version);
    if (!v || v->parts.size() < 2 || v->major() < 1)
      out.push_back(fmt::format("nvmlSystemGetDriverVersion: \"{}\"", n.driver_version));
  }
  if (!plausible_cuda_version(n.cuda_driver_version))
    out.push_back("nvmlSystemGetCudaDriverVersion: " + encoded(n.cuda_driver_version));
  if (pci_gpus >= 0 && static_cast<int>(gpus.size()) > pci_gpus)
    out.push_back(fmt::format("nvmlDeviceGetCount: {} GPUs, but the PCI bus holds {} NVIDIA GPU{}", gpus.size(),
                              pci_gpus, pci_gpus == 1 ? "" : "s"));
  for (const auto* g : gpus)
    if (!plausible_compute_capability(g->compute_capability))
      out.push_back(fmt::format("GPU {}: compute capability {}", g->index, g->compute_capability));
  return out;
}

std::vector<std::string> implausible_driver_api(const snapshot::DriverApiFacts& d) {
  std::vector<std::string> out;
  if (!plausible_cuda_version(d.driver_version)) out.push_back("cuDriverGetVersion: " + encoded(d.driver_version));
  if (d.device_count < -1) out.push_back(fmt::format("cuDeviceGetCount: {}", d.device_count));
  for (const auto& dev : d.devices)
    if (!plausible_compute_capability(dev.compute_capability))
      out.push_back(fmt::format("device {}: compute capability {}", dev.index, dev.compute_capability));
  return out;
}

std::vector<std::string> implausible_cudart(const snapshot::CudartFacts& c) {
  std::vector<std::string> out;
  if (!plausible_cuda_version(c.runtime_version)) out.push_back("cudaRuntimeGetVersion: " + encoded(c.runtime_version));
  if (!plausible_cuda_version(c.driver_version)) out.push_back("cudaDriverGetVersion: " + encoded(c.driver_version));
  if (c.device_count < -1) out.push_back(fmt::format("cudaGetDeviceCount: {}", c.device_count));
  return out;
}

}  // namespace cudoctor::rules
