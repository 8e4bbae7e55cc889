#include "cudoctor/rules/catalog.hpp"

#include <stdexcept>

namespace cudoctor::rules {
namespace {

using L = Layer;
using S = Severity;

// Append only. Order within a layer is causal order: a finding listed earlier explains
// the ones after it.
constexpr CatalogEntry k_catalog[] = {
    {"host-os", L::L0, S::ok, "Operating system"},
    {"in-container", L::L0, S::info, "Running inside a container"},
    {"in-virtual-machine", L::L0, S::info, "Running in a virtual machine"},
    {"wsl2", L::L0, S::info, "Running under WSL2"},
    {"wsl1-no-gpu", L::L0, S::error, "WSL1 cannot use a GPU"},
    {"fact-unreadable", L::L0, S::warn, "A fact source could not be read"},
    {"driver-fact-unreadable", L::L1, S::warn, "A driver fact source could not be read"},
    {"pci-unreadable", L::L1, S::warn, "The PCI bus could not be listed"},
    {"no-nvidia-gpu", L::L1, S::error, "No NVIDIA GPU on the PCI bus"},
    {"wsl-no-gpu-device", L::L1, S::error, "WSL2 has no /dev/dxg: the Windows GPU is not shared"},
    {"wsl-gpu-device", L::L1, S::ok, "WSL2 GPU device /dev/dxg present"},
    {"gpus-present", L::L1, S::ok, "NVIDIA GPUs on the PCI bus"},
    {"nouveau-bound", L::L1, S::error, "The open-source nouveau driver holds the GPU"},
    {"gpu-bound-to-vfio", L::L1, S::error, "The GPU is reserved for a virtual machine (vfio-pci)"},
    {"gpu-not-bound", L::L1, S::error, "The nvidia module is loaded but did not take the GPU"},
    {"driver-too-old-for-gpu", L::L1, S::error, "The driver is older than this GPU"},
    {"driver-too-new-for-gpu", L::L1, S::error, "The driver no longer supports this GPU"},
    {"container-no-gpu-access", L::L1, S::error, "The container was started without GPU access"},
    {"nvidia-module-blacklisted", L::L1, S::error, "The nvidia module is blacklisted"},
    {"module-blocked-by-secure-boot", L::L1, S::error, "Secure Boot is on and the nvidia module is not loaded"},
    {"nvidia-module-not-loaded", L::L1, S::error, "The nvidia kernel module is not loaded"},
    {"nvidia-module-loaded", L::L1, S::ok, "nvidia kernel module loaded"},
    {"uvm-module-not-loaded", L::L1, S::error, "nvidia-uvm is not loaded: CUDA cannot initialise"},
    {"uvm-loaded-on-demand", L::L1, S::warn, "nvidia-uvm is not loaded yet; the setuid nvidia-modprobe loads it"},
    {"device-nodes-missing", L::L1, S::error, "NVIDIA device nodes are missing"},
    {"device-nodes-created-on-demand", L::L1, S::warn,
     "NVIDIA device nodes are missing; the setuid nvidia-modprobe creates them"},
    {"device-nodes-not-permitted", L::L1, S::error, "This user may not open the NVIDIA device nodes"},
    {"device-nodes-ok", L::L1, S::ok, "Device nodes present and usable"},
    {"driver-library-missing", L::L1, S::error, "The user-space driver (libcuda.so.1) is not installed"},
    {"driver-version-mismatch", L::L1, S::error, "Kernel module and user-space driver are different versions"},
    {"driver-libraries-ok", L::L1, S::ok, "User-space driver libraries"},
    {"nvml-failed", L::L1, S::error, "NVML could not be queried"},
    {"nvml-error", L::L1, S::error, "NVML reports an error"},
    {"nvml-error-explained-above", L::L1, S::info, "NVML reports an error that a driver finding explains"},
    {"nvml-implausible", L::L1, S::error, "NVML answered with values that cannot be true"},
    {"nvml-ok", L::L1, S::ok, "NVML answers"},
    {"gpu-count-mismatch", L::L1, S::warn, "NVML sees fewer GPUs than the PCI bus"},
    {"container-capability-missing", L::L1, S::error, "The container was started without the compute capability"},
    {"stubs-on-loader-path", L::L2, S::error, "The toolkit's stub libcuda is on the loader's path"},
    {"toolkit-newer-than-driver", L::L2, S::warn, "A CUDA toolkit is newer than the driver supports"},
    {"toolkit-version-witnesses-disagree", L::L2, S::warn, "A toolkit's files disagree about its version"},
    {"cuda-link-dangling", L::L2, S::warn, "/usr/local/cuda points nowhere"},
    {"toolkit-incomplete", L::L2, S::warn, "A toolkit is half there"},
    {"cuda-link-not-path-nvcc", L::L2, S::warn, "/usr/local/cuda and the nvcc on PATH are different toolkits"},
    {"cuda-home-not-path-nvcc", L::L2, S::warn, "CUDA_HOME and the nvcc on PATH are different toolkits"},
    {"nvcc-runtime-mismatch", L::L2, S::warn, "nvcc and the CUDA runtime the loader finds are different versions"},
    {"cuda-paths-set-globally", L::L2, S::info, "CUDA paths are set for every shell or program"},
    {"no-toolkit", L::L2, S::info, "No CUDA toolkit is installed"},
    {"toolkit-found", L::L2, S::ok, "CUDA toolkit"},
    {"stubs-dir-on-loader-path", L::L2, S::warn, "A toolkit's stubs directory is on the loader's path"},
    {"framework-rocm-build", L::L3, S::error, "A ROCm build of a framework on an NVIDIA machine"},
    {"cpu-only-build", L::L3, S::error, "A framework built without CUDA"},
    {"python-on-path-lacks-framework", L::L3, S::warn, "The python on PATH is not the one with the framework"},
    {"framework-library-missing", L::L3, S::error, "A library the framework needs is not found"},
    {"framework-library-shadowed", L::L3, S::error, "Another copy of a CUDA library shadows the framework's own"},
    {"framework-library-shadowed-by-newer", L::L3, S::warn,
     "A newer copy of a CUDA library shadows the framework's own"},
    {"framework-symbol-version-missing", L::L3, S::error, "A symbol version the framework needs is missing"},
    {"framework-two-cuda-runtimes", L::L3, S::warn, "Two CUDA runtimes of different majors in one process"},
    {"framework-cuda-too-new-for-driver", L::L3, S::error, "The framework's CUDA needs a newer driver"},
    {"framework-no-kernels-for-gpu", L::L3, S::error, "The framework has no kernels for this GPU"},
    {"framework-ptx-jit-unavailable", L::L3, S::error,
     "The framework reaches this GPU only through PTX the driver cannot JIT"},
    {"framework-cuda-beyond-gpu-branch", L::L3, S::error,
     "The framework's CUDA needs a driver newer than this GPU's last branch"},
    {"framework-library-older", L::L3, S::warn, "A CUDA library is older than the framework was built against"},
    {"no-framework", L::L3, S::info, "No deep-learning framework found"},
    {"python-envs-not-inspected", L::L3, S::info, "Some Python environments were not inspected"},
    {"framework-found", L::L3, S::ok, "Framework"},
    {"framework-library-duplicate", L::L3, S::warn, "A second copy of a CUDA library, of the framework's own version"},
    {"cuda-driver-failed", L::L4, S::error, "The CUDA driver library failed inside cuInit"},
    {"cuda-stub-driver", L::L4, S::error, "The toolkit's stub libcuda is loaded instead of the driver"},
    {"cuda-no-device", L::L4, S::error, "cuInit finds no CUDA device"},
    {"cuda-no-device-no-gpu", L::L4, S::info, "cuInit finds no CUDA device, and the machine has no GPU"},
    {"cuda-init-unknown-error", L::L4, S::error, "cuInit fails with an unknown error (999)"},
    {"cuda-forward-compat-unsupported", L::L4, S::error, "Forward compatibility on a GPU that does not allow it (804)"},
    {"cuda-init-failed", L::L4, S::error, "cuInit fails"},
    {"cuda-context-failed", L::L4, S::error, "A CUDA context cannot be created on a GPU"},
    {"cuda-driver-implausible", L::L4, S::error, "The CUDA driver API answered with values that cannot be true"},
    {"cuda-driver-ok", L::L4, S::ok, "CUDA driver API"},
    {"gpu-count-nvml-vs-cuda", L::L4, S::warn, "NVML and the CUDA driver API count different GPUs"},
    {"runtime-without-driver", L::L4, S::error, "A CUDA runtime finds no driver (error 35)"},
    {"runtime-too-new-for-driver", L::L4, S::error, "A CUDA runtime is newer than the driver supports (error 35)"},
    {"cuda-runtime-failed", L::L4, S::error, "A CUDA runtime fails"},
    {"cuda-runtime-implausible", L::L4, S::error, "A CUDA runtime answered with values that cannot be true"},
    {"cuda-runtime-ok", L::L4, S::ok, "CUDA runtime"},
    {"cuda-visible-devices-hides-gpus", L::L4, S::warn, "CUDA_VISIBLE_DEVICES hides every GPU"},
    {"compute-failed", L::L5, S::error, "The computation check did not finish"},
    {"gpu-out-of-memory", L::L5, S::error, "GPU memory cannot be allocated"},
    {"copy-corrupted", L::L5, S::error, "Data copied to the GPU and back comes back changed"},
    {"gemm-failed", L::L5, S::error, "A cuBLAS matrix product fails"},
    {"gemm-wrong-result", L::L5, S::error, "A cuBLAS matrix product gives a wrong result"},
    {"compute-ok", L::L5, S::ok, "Copies and matrix products check out"},
    {"compute-not-run", L::L5, S::info, "The computation check did not run"},
    {"runtime-not-run", L::L4, S::info, "L4 and L5 were not run"},
    {"copy-bandwidth-low", L::L5, S::warn, "Host-device copies are far below what the PCIe link allows"},
};

}  // namespace

std::span<const CatalogEntry> catalog() {
  return k_catalog;
}

const CatalogEntry& catalog_entry(std::string_view id) {
  for (const auto& e : k_catalog)
    if (e.id == id) return e;
  throw std::logic_error("finding id not in the catalog: " + std::string(id));
}

Finding make_finding(std::string_view id) {
  const auto& e = catalog_entry(id);
  Finding f;
  f.id = std::string(e.id);
  f.layer = e.layer;
  f.severity = e.severity;
  f.title = std::string(e.title);
  return f;
}

std::string_view to_string(Layer l) {
  constexpr std::string_view names[] = {"L0", "L1", "L2", "L3", "L4", "L5"};
  return names[static_cast<int>(l)];
}

std::string_view layer_name(Layer l) {
  constexpr std::string_view names[] = {"host", "driver", "toolkit", "framework", "runtime", "application"};
  return names[static_cast<int>(l)];
}

std::string_view to_string(Severity s) {
  constexpr std::string_view names[] = {"ok", "info", "warn", "error"};
  return names[static_cast<int>(s)];
}

}  // namespace cudoctor::rules
