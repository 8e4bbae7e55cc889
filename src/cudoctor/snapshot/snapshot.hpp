#pragma once
// The snapshot: every fact cudoctor gathered, as plain structs. It is the single interface
// between gathering (probe/) and judging (rules/); diff and fleet read it from JSON too.
// Fields are only ever added; k_schema_version is bumped when a meaning changes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/snapshot/host_facts.hpp"
#include "cudoctor/snapshot/python_facts.hpp"
#include "cudoctor/snapshot/settings_facts.hpp"
#include "cudoctor/snapshot/toolkit_facts.hpp"

namespace cudoctor::snapshot {

inline constexpr int k_schema_version = 1;

// A fact source that exists but could not be read or parsed: data, not an error.
struct Unreadable {
  std::string path;    // logical path
  std::string reason;  // "Permission denied", "not a hex number: 'zz'"
  bool operator==(const Unreadable&) const = default;
};

// One PCI function of display class (0x03xxxx) from /sys/bus/pci/devices.
struct PciDevice {
  std::string address;  // "0000:01:00.0"
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  std::uint32_t class_code = 0;    // 0x030000 VGA, 0x030200 3D controller
  std::string vendor_name;         // pci.ids, "" when unknown
  std::string device_name;         // pci.ids, "AD107M [GeForce RTX 4060 Max-Q / Mobile]"
  std::string subsystem_name;      // pci.ids
  std::string driver;              // bound kernel driver ("nvidia", "nouveau", "vfio-pci"), "" if none
  std::string current_link_speed;  // as sysfs writes it, "16.0 GT/s PCIe"
  std::string max_link_speed;
  int current_link_width = 0;  // lanes; 0 unknown
  int max_link_width = 0;
  std::string runtime_status;   // power/runtime_status: active, suspended, …
  bool boot_vga = false;        // boot_vga == 1
  std::string power_state;      // power_state: D0, D3hot, D3cold, unknown; "" when the kernel has no such file
  std::string runtime_control;  // power/control: "auto" (runtime power management on) or "on"
  // The port above it: the parent directory in /sys/devices when that is a PCI function
  // (a root or switch port); the link's capability is the lesser of the two ends'.
  std::string port_address;  // "0000:00:01.0", "" when the device hangs off the host bridge
  std::string port_max_link_speed;
  int port_max_link_width = 0;
  bool operator==(const PciDevice&) const = default;
};

struct ModuleState {
  std::string name;  // "nvidia"
  bool loaded = false;
  std::string state;  // /proc/modules: Live, Loading, Unloading
  bool operator==(const ModuleState&) const = default;
};

// A modprobe.d or kernel command-line line that keeps a module from loading.
struct Blacklist {
  std::string module;
  std::string source;  // "/etc/modprobe.d/blacklist-nvidia.conf:3" or "/proc/cmdline"
  std::string line;    // the line itself
  bool operator==(const Blacklist&) const = default;
};

struct KernelModule {
  std::string version;         // "535.104.05"; "" when no NVIDIA module is loaded
  std::string version_source;  // /proc/driver/nvidia/version or /sys/module/nvidia/version
  std::string version_line;    // the NVRM line as the kernel wrote it
  std::string flavor;          // "proprietary", "open", "" unknown
  bool operator==(const KernelModule&) const = default;
};

// What a device node's path holds, as stat(2) says; JSON writes sys::FileType's names.
enum class NodeType { missing, file, directory, symlink, char_device, block_device, fifo, socket, other };

struct DeviceNode {
  std::string path;  // "/dev/nvidia0"
  NodeType type = NodeType::missing;
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::uint32_t mode = 0;  // permission bits
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  bool can_read = false;  // for the effective user, from mode, owner and groups
  bool can_write = false;
  bool operator==(const DeviceNode&) const = default;
};

// A file or link named after a driver library's soname that the loader does not take.
struct LibraryCandidate {
  std::string path;  // logical: "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
  // "dangling": a link whose target does not exist; "off_loader_path": a file the loader
  // does not search (a directory outside its path, or an ld.so.conf one the cache lacks);
  // "wrong_class": the loader passed over it for its ELF class or machine; "unusable": the
  // loader passed over it for another reason (not an ELF file, unreadable).
  std::string state;
  std::string target;  // dangling: the link's text as written
  std::string reason;  // wrong_class, unusable: the loader's reason, "wrong ELF class: ELFCLASS32"
  bool operator==(const LibraryCandidate&) const = default;
};

// A forward-compatibility libcuda (NVIDIA's cuda-compat package): what its
// .note.cuda.fwd_compatibility ELF note (owner "NVIDIA Corporation", JSON) says it supports.
struct ForwardCompat {
  bool note = false;         // the note was read; false: known as compat by its directory only
  std::string note_error;    // the note is there but could not be read
  std::string cuda;          // "CUDA Version": the CUDA it brings, "12.4"
  std::vector<int> drivers;  // "driver": the host driver branches it runs over, 470, 535, …
  std::vector<int> devices;  // "device": undocumented by NVIDIA
  bool operator==(const ForwardCompat&) const = default;
};

// A user-space driver library as the dynamic loader would find it.
struct DriverLibrary {
  std::string soname;     // "libcuda.so.1"
  std::string path;       // where the loader finds the soname, "" when not found
  std::string real_path;  // after following links
  std::string version;    // from the real file name, "535.104.05"
  std::string
      found_by;  // "ld.so.conf: /etc/ld.so.conf.d/x86_64-linux-gnu.conf", "default directory", "LD_LIBRARY_PATH"
  std::vector<std::string> searched;  // directories looked in, in order, when not found
  // When not found: files and links of the soname in the usual driver directories and the
  // ld.so.conf ones, so "installed but its link dangles" is told from "not installed".
  std::vector<LibraryCandidate> candidates;
  std::optional<ForwardCompat> forward_compat;  // libcuda from a cuda-compat package (its note or directory)
  bool operator==(const DriverLibrary&) const = default;
};

// How a probe run in a child process ended; JSON writes it as the string after each value.
enum class ChildStatus {
  unset,            // "": no probe of this kind was started (its layer was not examined)
  ok,               // "ok": the child delivered its facts
  crashed,          // "crashed": killed by a signal before it delivered
  timeout,          // "timeout": killed at its deadline
  exited,           // "exited": ended without delivering (a library called exit())
  bad_reply,        // "bad_reply": it delivered something that is not a reply
  failed_to_start,  // "failed_to_start": no pipe or no fork
  not_run,          // "not_run": the probe decided not to start it (no library, probes off)
  load_failed,      // "load_failed": the child could not load the library
  child_error,      // "child_error": the child's own code threw; message holds what it said
};
// The JSON string of a status ("" for unset).
std::string to_string(ChildStatus status);

// How a probe run in a child process ended.
struct ChildOutcome {
  ChildStatus status = ChildStatus::unset;
  int signal = 0;         // crashed: the signal
  int exit_code = 0;      // exited: the code
  double seconds = 0;     // wall time of the child
  std::string message;    // anything the child or the parent said about it
  std::string last_call;  // the vendor call it was in when it did not finish ("cuInit"), if known
  bool operator==(const ChildOutcome&) const = default;
};

struct NvmlGpu {
  int index = 0;
  std::string name;  // nvmlDeviceGetName
  std::string uuid;
  std::string pci_bus_id;  // normalised to sysfs form, "0000:01:00.0"
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_used_bytes = 0;
  int temperature_c = -1;  // -1 unknown
  int utilization_gpu_pct = -1;
  int utilization_memory_pct = -1;
  int power_limit_w = -1;           // nvmlDeviceGetPowerManagementLimit, from milliwatts
  int power_limit_enforced_w = -1;  // nvmlDeviceGetEnforcedPowerLimit: after every limiter
  int power_limit_default_w = -1;   // nvmlDeviceGetPowerManagementDefaultLimit: what it boots with
  int power_limit_min_w = -1;       // nvmlDeviceGetPowerManagementLimitConstraints
  int power_limit_max_w = -1;
  // nvmlDeviceGetCurrentClocksEventReasons (…ThrottleReasons before NVML 12.2): nvml.h's bits,
  // 0x1 GpuIdle, 0x4 SwPowerCap, 0x8 HwSlowdown, 0x20 SwThermalSlowdown, …; -1 unknown.
  std::int64_t clocks_event_reasons = -1;
  int performance_state = -1;  // nvmlDeviceGetPerformanceState: 0 (P0, most) .. 15; -1 unknown
  int max_clock_sm_mhz = -1;
  int power_draw_w = -1;
  int clock_graphics_mhz = -1;
  int clock_sm_mhz = -1;
  int clock_memory_mhz = -1;
  int max_clock_graphics_mhz = -1;
  int max_clock_memory_mhz = -1;
  int pcie_gen_current = -1;
  int pcie_gen_max = -1;
  int pcie_width_current = -1;
  int pcie_width_max = -1;
  std::string persistence_mode;     // "enabled", "disabled", "" unknown
  std::string mig_mode;             // "enabled", "disabled", "" unsupported
  std::string compute_capability;   // "9.0"
  std::vector<std::string> errors;  // "nvmlDeviceGetPowerManagementLimit: Not Supported"
  bool operator==(const NvmlGpu&) const = default;
};

struct NvmlFacts {
  std::string library;  // logical path of libnvidia-ml.so.1 used, "" if none found
  ChildOutcome outcome;
  int init_code = -1;             // nvmlInit_v2 return, -1 not called
  std::string init_error_name;    // "NVML_ERROR_DRIVER_NOT_LOADED"
  std::string init_error_string;  // nvmlErrorString: "Driver Not Loaded"
  std::string driver_version;     // nvmlSystemGetDriverVersion
  int cuda_driver_version = 0;    // nvmlSystemGetCudaDriverVersion_v2, 12020
  std::vector<NvmlGpu> gpus;      // as NVML listed them; gather() moves them into Snapshot::gpus
  bool operator==(const NvmlFacts&) const = default;
};

// A Container Device Interface specification for NVIDIA devices (/etc/cdi, /var/run/cdi): the
// driver libraries it tells the engine to mount are those of the driver it was generated for.
struct CdiSpec {
  std::string path;                          // /etc/cdi/nvidia.yaml
  std::string kind;                          // nvidia.com/gpu
  std::vector<std::string> driver_versions;  // of the versioned driver libraries it mounts, distinct
  int libraries = 0;                         // how many versioned driver libraries it mounts
  std::vector<std::string> missing;          // of those, the host paths absent here (the first few)
  bool operator==(const CdiSpec&) const = default;
};

struct DriverFacts {
  std::vector<ModuleState> modules;  // nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nouveau
  bool modules_listed = false;       // /proc/modules was read
  std::vector<Blacklist> blacklists;
  // modprobe.d directories and files and /proc/cmdline that exist but could not be read: a
  // blacklist in them is not seen, so an empty blacklists does not mean there is none.
  std::vector<std::string> blacklist_sources_unreadable;
  KernelModule kernel_module;
  std::vector<std::string> module_files;  // nvidia.ko* under /lib/modules/<running kernel>
  std::vector<DeviceNode> device_nodes;
  std::string nvidia_modprobe;           // path of the nvidia-modprobe helper, "" if not installed
  bool nvidia_modprobe_setuid = false;   // setuid root: CUDA can then create nodes and load nvidia-uvm itself
  std::vector<DriverLibrary> libraries;  // libcuda.so.1, libnvidia-ml.so.1
  // The unversioned libcuda.so: what dlopen("libcuda.so") finds (bitsandbytes' old CUDA set-up
  // opens it), and whether one lies beside the libcuda.so.1 the loader takes (Triton links its
  // launcher with -lcuda against the directories ldconfig lists libcuda.so.1 in).
  DriverLibrary libcuda_unversioned;
  bool libcuda_unversioned_beside = false;
  NvmlFacts nvml;
  std::vector<PciDevice> other_display_devices;  // display controllers not made by NVIDIA
  bool pci_listed = false;                       // /sys/bus/pci/devices was read
  std::vector<CdiSpec> cdi_specs;                // NVIDIA CDI specifications, /etc/cdi then /var/run/cdi
  bool operator==(const DriverFacts&) const = default;
};

// An NVIDIA GPU: its PCI function and, when NVML answered, NVML's view of it.
struct Gpu {
  PciDevice pci;  // address empty when NVML sees a GPU sysfs does not show
  std::optional<NvmlGpu> nvml;
  bool operator==(const Gpu&) const = default;
};

// The result of one CUDA API call: its code, NVIDIA's name and message for it.
struct CudaCall {
  int code = -1;        // -1: not called
  std::string name;     // "CUDA_ERROR_NO_DEVICE", "cudaErrorInsufficientDriver"
  std::string message;  // cuGetErrorString / cudaGetErrorString
  bool operator==(const CudaCall&) const = default;
};

// One device as the driver API describes it.
struct CudaDevice {
  int index = 0;
  std::string name;
  std::string compute_capability;  // "9.0"
  std::uint64_t memory_total_bytes = 0;
  int multiprocessors = 0;
  int clock_mhz = 0;
  int memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  std::string pci_bus_id;  // sysfs form, "0000:00:06.0"
  CudaCall context;        // cuDevicePrimaryCtxRetain
  bool operator==(const CudaDevice&) const = default;
};

// L4: the driver API from the libcuda.so.1 the loader picks, in a child process.
struct DriverApiFacts {
  std::string library;  // logical path of the libcuda loaded, "" when none was found
  ChildOutcome outcome;
  int driver_version = 0;  // cuDriverGetVersion, 12020
  CudaCall init;           // cuInit(0)
  CudaCall device_count_call;
  int device_count = -1;
  std::vector<CudaDevice> devices;
  bool operator==(const DriverApiFacts&) const = default;
};

// L4: one CUDA runtime library (libcudart) loaded over that driver.
struct CudartFacts {
  std::string library;         // logical path
  std::string origin;          // what it belongs to: "toolkit /usr/local/cuda-13.0"
  std::string driver_library;  // the libcuda preloaded for it, "" when none exists
  ChildOutcome outcome;
  int runtime_version = 0;  // cudaRuntimeGetVersion, 13000
  int driver_version = 0;   // cudaDriverGetVersion (0 when no driver)
  CudaCall device_count_call;
  int device_count = -1;
  CudaCall set_device;  // cudaSetDevice(0), when a device exists
  bool operator==(const CudartFacts&) const = default;
};

struct CopyCheck {
  std::string kind;  // h2d_pageable, d2h_pageable, h2d_pinned, d2h_pinned
  std::uint64_t bytes = 0;
  double gb_per_s = 0;   // 1e9 bytes per second
  bool matches = false;  // the bytes came back unchanged (d2h after h2d)
  bool operator==(const CopyCheck&) const = default;
};

struct GemmCheck {
  std::string dtype;  // fp32, fp16, bf16 (inputs; accumulation and output in fp32)
  int m = 0, n = 0, k = 0;
  double max_abs_error = 0;  // against a CPU product of the same inputs, in double
  double tolerance = 0;      // allowed max_abs_error for this size and type
  bool passed = false;
  double tflops = 0;        // from a larger product, timed
  int throughput_size = 0;  // n of the n x n x n product timed
  CudaCall status;          // the first failing call, code 0 when all succeeded
  bool operator==(const GemmCheck&) const = default;
};

// L5: a real computation on one device, in a child process.
struct ComputeCheck {
  int device = 0;
  std::string cudart;  // logical paths of the libraries used
  std::string cublas;
  ChildOutcome outcome;
  CudaCall allocation;  // cudaMalloc of the copy buffers
  std::vector<CopyCheck> copies;
  // False when the copies could not be timed alone (the GPUs are checked at once, and
  // another GPU's copies did not finish in time): their GB/s then say nothing of the link.
  bool copies_timed_alone = true;
  std::vector<GemmCheck> gemms;
  bool operator==(const ComputeCheck&) const = default;
};

struct RuntimeFacts {
  bool ran = false;                                 // false with --no-runtime, or under --root without --runtime
  std::string not_run_reason;                       // why not, when ran is false and probes were wanted
  std::optional<std::string> cuda_visible_devices;  // the environment variable, if set
  DriverApiFacts driver_api;
  std::vector<CudartFacts> cudarts;
  std::vector<ComputeCheck> compute;
  bool operator==(const RuntimeFacts&) const = default;
};

struct Snapshot {
  int schema = k_schema_version;
  std::string tool_version;
  std::string root;  // "/" or the --root directory
  HostFacts host;
  DriverFacts driver;
  std::vector<Gpu> gpus;
  ToolkitFacts toolkit;
  PythonFacts python;
  RuntimeFacts runtime;
  SettingsFacts settings;
  std::vector<Unreadable> unreadable;
  bool operator==(const Snapshot&) const = default;
};

}  // namespace cudoctor::snapshot
