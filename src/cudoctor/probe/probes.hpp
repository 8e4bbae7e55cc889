#pragma once
// The probes: each gathers the facts of one source of truth and never judges them.
#include "cudoctor/probe/context.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::probe {

// L0: distro, kernel, architecture, container, WSL, hypervisor, Secure Boot.
snapshot::HostFacts probe_host(Context& ctx);

// L0: the helper programs of a fixed list (package managers, nvidia-smi, sudo, …) found as
// executable files on PATH and in the system's bin and sbin directories.
std::vector<snapshot::Tool> probe_tools(Context& ctx);

// L0: installed packages relevant to CUDA from dpkg's and pacman's databases, into
// host.packages, and which databases were read into host.packages_known.
void probe_packages(Context& ctx, snapshot::HostFacts& host);

struct PciScan {
  std::vector<snapshot::PciDevice> display;  // every display-class function, NVIDIA or not
  bool listed = false;                       // the bus directory could be read
};
// L1: display-class PCI functions from /sys/bus/pci/devices, named from pci.ids.
PciScan probe_pci(Context& ctx);

// L1: NVIDIA and nouveau modules in /proc/modules; blacklists in modprobe.d and /proc/cmdline.
void probe_modules(Context& ctx, snapshot::DriverFacts& driver);

// L1: nvidia.ko files installed for the running kernel.
std::vector<std::string> probe_module_files(Context& ctx, const std::string& kernel);

// L1: the loaded kernel module's version (/proc/driver/nvidia/version, /sys/module/nvidia).
snapshot::KernelModule probe_kernel_module(Context& ctx);

// L1: the setuid nvidia-modprobe helper, which creates device nodes and loads nvidia-uvm.
void probe_nvidia_modprobe(Context& ctx, snapshot::DriverFacts& driver);

// L1: /dev/nvidia* nodes and whether the effective user may open them.
std::vector<snapshot::DeviceNode> probe_device_nodes(Context& ctx);

// L1: where the loader would find libcuda.so.1 and libnvidia-ml.so.1, and their versions.
std::vector<snapshot::DriverLibrary> probe_driver_libraries(Context& ctx, const snapshot::HostFacts& host);
// libcuda.so (unversioned) as dlopen finds it, and whether one lies beside the libcuda.so.1 of
// driver.libraries (which must be probed first).
void probe_unversioned_libcuda(Context& ctx, snapshot::DriverFacts& driver);
// The NVIDIA CDI specifications in /etc/cdi and /var/run/cdi, and which driver's libraries they mount.
void probe_cdi(Context& ctx, snapshot::DriverFacts& driver);

// L1: which libnvidia-ml.so.1 NVML is asked through (host path into host_library), or why
// it is not (facts with outcome "not_run"). probe_runtime runs it.
snapshot::NvmlFacts nvml_to_run(Context& ctx, const std::vector<snapshot::DriverLibrary>& libraries,
                                std::string& host_library);

// L2: the CUDA toolkits and what selects one (PATH, CUDA_HOME, /usr/local/cuda, the loader).
snapshot::ToolkitFacts probe_toolkits(Context& ctx);

// L3: Python environments (PATH, VIRTUAL_ENV, CONDA_PREFIX, the system's, conda envs, pyenv,
// the given interpreters) and the frameworks in them.
snapshot::PythonFacts probe_python(Context& ctx, const std::vector<std::string>& given);

// L1's NVML and L4 and L5, in child processes: NVML, the driver API from the libcuda found
// and each CUDA runtime over it at once, under one --timeout; then a checked computation on
// every device at once. Fills snap.driver.nvml and snap.runtime.
void probe_runtime(Context& ctx, snapshot::Snapshot& snap);

// The settings that change how CUDA work runs and where each is set (environment, start-up
// files, activation scripts, services, NCCL's files, modprobe.d, kernel command lines), the
// running kernel's module parameters they name, and the allocator keys torch knows.
snapshot::SettingsFacts probe_settings(Context& ctx, const snapshot::PythonFacts& python);

// Every probe, in order; the snapshot a check judges.
snapshot::Snapshot gather(const sys::Sys& sys, const Options& options);

}  // namespace cudoctor::probe
