#include "cudoctor/report/causes.hpp"

namespace cudoctor::report {
namespace {

// Most specific rows first: a finding takes the first row whose cause is present.
constexpr CauseRow k_causes[] = {
    // A container started without the right capabilities explains every missing piece of the driver.
    {"uvm-module-not-loaded", "container-capability-missing", "the runtime mounts what the capabilities ask for"},
    {"uvm-loaded-on-demand", "container-capability-missing", "the runtime mounts what the capabilities ask for"},
    {"device-nodes-missing", "container-capability-missing", "the runtime mounts what the capabilities ask for"},
    {"device-nodes-created-on-demand", "container-capability-missing",
     "the runtime mounts what the capabilities ask for"},
    {"driver-library-missing", "container-capability-missing", "no compute capability: no libcuda.so.1 is mounted"},
    {"nvml-failed", "container-capability-missing", "no utility capability: no libnvidia-ml.so.1 is mounted"},
    {"nvml-error", "container-capability-missing", "no utility capability: no libnvidia-ml.so.1 is mounted"},
    {"nvml-error-explained-above", "container-capability-missing",
     "no utility capability: no libnvidia-ml.so.1 is mounted"},
    {"device-nodes-missing", "container-visible-devices-none", "the toolkit injects no GPU node for none"},
    {"gpu-count-mismatch", "container-visible-devices-none", "the toolkit injects no GPU for none"},
    {"uvm-module-not-loaded", "container-no-gpu-access", "a container without GPUs has no nodes"},
    {"uvm-loaded-on-demand", "container-no-gpu-access", "a container without GPUs has no nodes"},
    {"device-nodes-missing", "container-no-gpu-access", "a container without GPUs has no nodes"},
    {"device-nodes-created-on-demand", "container-no-gpu-access", "a container without GPUs has no nodes"},
    {"driver-library-missing", "container-no-gpu-access", "a container without GPUs has no driver libraries"},
    {"driver-library-missing", "wsl-libraries-off-loader-path", "the loader does not search /usr/lib/wsl/lib"},
    {"driver-version-mismatch", "wsl-native-driver-installed", "a Linux driver's libraries beside WSL's"},
    {"driver-library-missing", "wsl-native-driver-installed", "a Linux driver's libraries beside WSL's"},
    {"cuda-forward-compat-unsupported", "cuda-compat-unusable", "the loader takes the image's cuda-compat libcuda"},
    {"cuda-init-failed", "cuda-compat-unusable", "the loader takes the image's cuda-compat libcuda"},
    {"runtime-too-new-for-driver", "cuda-compat-unusable", "the loader takes the image's cuda-compat libcuda"},
    // The kernel module comes before everything that needs it.
    {"nvidia-module-not-loaded", "nvidia-module-blacklisted", "a blacklisted module is not loaded"},
    {"nvidia-module-not-loaded", "module-blocked-by-secure-boot", "Secure Boot refuses an unsigned module"},
    {"nvidia-module-not-loaded", "nouveau-bound", "nouveau holds the GPU"},
    {"uvm-module-not-loaded", "nvidia-module-not-loaded", "nvidia-uvm needs nvidia"},
    {"uvm-loaded-on-demand", "nvidia-module-not-loaded", "nvidia-uvm needs nvidia"},
    {"device-nodes-missing", "nvidia-module-not-loaded", "the module creates the nodes"},
    {"device-nodes-created-on-demand", "nvidia-module-not-loaded", "the module creates the nodes"},
    {"gpu-count-mismatch", "gpu-not-bound", "NVML counts the GPUs the module took"},
    {"gpu-count-mismatch", "driver-too-old-for-gpu", "NVML counts the GPUs the module took"},
    {"gpu-count-mismatch", "driver-too-new-for-gpu", "NVML counts the GPUs the module took"},
    // NVML is a consequence of any other driver problem.
    {"nvml-failed", "L1", "NVML needs the module, the nodes and the user-space library"},
    {"nvml-error", "L1", "NVML needs the module, the nodes and the user-space library"},
    {"nvml-error-explained-above", "L1", "NVML needs the module, the nodes and the user-space library"},
    {"nvml-implausible", "driver-version-mismatch", "a mismatched NVML answers with garbage"},
    // L2 problems that explain L4 failures.
    {"cuda-stub-driver", "stubs-on-loader-path", "the loader picks the stub"},
    {"cuda-stub-driver", "stubs-dir-on-loader-path", "a program that opens libcuda.so gets the stub"},
    {"cuda-no-device", "cuda-visible-devices-hides-gpus", "CUDA_VISIBLE_DEVICES leaves the driver no device"},
    {"runtime-too-new-for-driver", "toolkit-newer-than-driver", "the toolkit's runtime needs a newer driver"},
    {"runtime-too-new-for-driver", "framework-cuda-too-new-for-driver", "the framework's runtime needs a newer driver"},
    // L3: a library that is not found or not the right version explains what follows.
    {"framework-symbol-version-missing", "framework-library-shadowed", "the shadowing copy is older"},
    {"framework-symbol-version-missing", "framework-library-shadowed-by-newer", "the shadowing copy lacks the version"},
    {"framework-two-cuda-runtimes", "framework-library-shadowed", "the shadowing copy brings another runtime"},
    {"framework-two-cuda-runtimes", "framework-library-shadowed-by-newer", "the shadowing copy brings another runtime"},
    // check --deep: a framework that sees no GPU, or computes wrong, for a reason found below it.
    {"deep-gpu-not-seen", "L3", "the framework's static findings say why"},
    {"deep-gpu-not-seen", "L2", "the framework needs a toolkit runtime the driver runs"},
    {"deep-gpu-not-seen", "L1", "a framework sees no GPU without a working driver"},
    {"deep-matmul-failed", "L1", "a computation needs a working driver"},
    {"deep-import-failed", "L3", "the framework's static findings say why"},
    // Above the break: CUDA cannot start without a driver and a GPU.
    {"L1", "L0", "WSL1 has no GPU at all"},
    {"L4", "L0", "WSL1 has no GPU at all"},
    {"L5", "L0", "WSL1 has no GPU at all"},
    {"L4", "L1", "cuInit needs the GPU, the module, the nodes and libcuda"},
    {"L5", "L1", "a computation needs a working driver"},
    {"L5", "L4", "a computation needs cuInit and a runtime"},
};

}  // namespace

std::span<const CauseRow> causal_order() {
  return k_causes;
}

}  // namespace cudoctor::report
