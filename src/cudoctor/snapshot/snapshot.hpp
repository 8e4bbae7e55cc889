#pragma once
// The snapshot: every fact cudoctor gathered, as plain structs. It is the single interface
// between gathering (probe/) and judging (rules/); diff and fleet read it from JSON too.
// Fields are only ever added; k_schema_version is bumped when a meaning changes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudoctor::snapshot {

inline constexpr int k_schema_version = 1;

// A fact source that exists but could not be read or parsed: data, not an error.
struct Unreadable {
  std::string path;    // logical path
  std::string reason;  // "Permission denied", "not a hex number: 'zz'"
  bool operator==(const Unreadable&) const = default;
};

// A conclusion with what it rests on, for facts inferred from several signs.
struct Detected {
  std::string kind;                   // "" when nothing was detected
  std::vector<std::string> evidence;  // "/.dockerenv exists", "/proc/1/cgroup: …/docker/…"
  bool operator==(const Detected&) const = default;
};

// A helper program found on the search path (probe/tools_probe.cpp).
struct Tool {
  std::string name;  // "nvidia-smi"
  std::string path;  // logical path where it was found, not followed: "/usr/bin/nvidia-smi"
  bool operator==(const Tool&) const = default;
};

// An installed distribution package relevant to CUDA (probe/package_probe.cpp).
struct Package {
  std::string name;     // dpkg Package / pacman %NAME%: "nvidia-driver-535", "libcudnn8"
  std::string version;  // dpkg Version / pacman %VERSION%: "535.183.01-0ubuntu1", "1:2.3-1"
  std::string manager;  // "dpkg" or "pacman"
  bool operator==(const Package&) const = default;
};

// An environment variable the NVIDIA container runtime or the CUDA driver reads.
struct EnvVar {
  std::string name;    // "NVIDIA_VISIBLE_DEVICES"
  std::string value;   // as set, "" when set empty
  std::string source;  // "environment" (ours) or "/proc/1/environ" (the container's first process)
  bool operator==(const EnvVar&) const = default;
};

struct HostFacts {
  std::string os_id;           // /etc/os-release ID, "debian"
  std::string os_version;      // VERSION_ID, "12"
  std::string os_pretty_name;  // PRETTY_NAME
  std::string kernel;          // /proc/sys/kernel/osrelease
  std::string arch;            // /proc/sys/kernel/arch, "x86_64"
  std::string hostname;        // /proc/sys/kernel/hostname
  std::string user;            // effective user name, "" if not in the password database
  std::uint32_t uid = 0;       // effective uid
  std::vector<std::uint32_t> gids;  // effective gid, then supplementary groups
  Detected container;          // kind: docker, podman, kubernetes, apptainer, lxc, systemd-nspawn
  Detected wsl;                // kind: "wsl2" or "wsl1"
  Detected hypervisor;         // kind: kvm, vmware, hyperv, xen, … or "unknown" with the cpu flag only
  std::optional<bool> secure_boot;  // efivars SecureBoot; nullopt: no EFI or unreadable
  std::string secure_boot_evidence;
  // What --redact hides. Not written to the JSON: a report must not list the machine's
  // accounts. Each list holds no duplicates and never "root" or /root.
  std::vector<std::string> private_names;  // the effective user, $USER, $LOGNAME, $SUDO_USER
  std::vector<std::string> private_homes;  // $HOME, the users' and $SUDO_USER's passwd homes (uid ≥ 1000)
  std::vector<std::string> host_names;     // the host name, its short form, its FQDNs in /etc/hosts
  std::vector<std::string> os_like;        // /etc/os-release ID_LIKE split on spaces: {"rhel", "centos", "fedora"}
  // Helper programs of a fixed list found as executable files on PATH, then in /usr/local/sbin,
  // /usr/sbin, /sbin, /usr/bin, /bin; the first hit of each, in the list's order.
  std::vector<Tool> tools;
  // Installed packages whose names say NVIDIA, CUDA, cuDNN, NCCL, nouveau, TensorRT or
  // python3-torch, from /var/lib/dpkg/status and /var/lib/pacman/local/*/desc.
  std::vector<Package> packages;
  // The managers whose databases were read ("dpkg", "pacman"): a manager not named here is
  // unknown, not "nothing installed". rpm's database (sqlite) is not read.
  std::vector<std::string> packages_known;
  // NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_CUDA,
  // NVIDIA_DISABLE_REQUIRE, CUDA_DISABLE_PTX_JIT, CUDA_FORCE_PTX_JIT, CUDA_MODULE_LOADING when
  // set, in that order: from our environment, or in a container from /proc/1/environ.
  std::vector<EnvVar> nvidia_env;
  bool operator==(const HostFacts&) const = default;
};

// One PCI function of display class (0x03xxxx) from /sys/bus/pci/devices.
struct PciDevice {
  std::string address;  // "0000:01:00.0"
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t subsystem_vendor_id = 0;
  std::uint16_t subsystem_device_id = 0;
  std::uint32_t class_code = 0;  // 0x030000 VGA, 0x030200 3D controller
  std::string vendor_name;       // pci.ids, "" when unknown
  std::string device_name;       // pci.ids, "AD107M [GeForce RTX 4060 Max-Q / Mobile]"
  std::string subsystem_name;    // pci.ids
  std::string driver;            // bound kernel driver ("nvidia", "nouveau", "vfio-pci"), "" if none
  std::string current_link_speed;  // as sysfs writes it, "16.0 GT/s PCIe"
  std::string max_link_speed;
  int current_link_width = 0;      // lanes; 0 unknown
  int max_link_width = 0;
  std::string runtime_status;      // power/runtime_status: active, suspended, …
  bool boot_vga = false;           // boot_vga == 1
  bool operator==(const PciDevice&) const = default;
};

struct ModuleState {
  std::string name;   // "nvidia"
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
  std::string version;        // "535.104.05"; "" when no NVIDIA module is loaded
  std::string version_source;  // /proc/driver/nvidia/version or /sys/module/nvidia/version
  std::string version_line;   // the NVRM line as the kernel wrote it
  std::string flavor;         // "proprietary", "open", "" unknown
  bool operator==(const KernelModule&) const = default;
};

struct DeviceNode {
  std::string path;     // "/dev/nvidia0"
  std::string type;     // sys::FileType name: char_device, missing, file, …
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::uint32_t mode = 0;  // permission bits
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  bool can_read = false;   // for the effective user, from mode, owner and groups
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

// A user-space driver library as the dynamic loader would find it.
struct DriverLibrary {
  std::string soname;     // "libcuda.so.1"
  std::string path;       // where the loader finds the soname, "" when not found
  std::string real_path;  // after following links
  std::string version;    // from the real file name, "535.104.05"
  std::string found_by;   // "ld.so.conf: /etc/ld.so.conf.d/x86_64-linux-gnu.conf", "default directory", "LD_LIBRARY_PATH"
  std::vector<std::string> searched;  // directories looked in, in order, when not found
  // When not found: files and links of the soname in the usual driver directories and the
  // ld.so.conf ones, so "installed but its link dangles" is told from "not installed".
  std::vector<LibraryCandidate> candidates;
  bool operator==(const DriverLibrary&) const = default;
};

// How a probe run in a child process ended.
struct ChildOutcome {
  std::string status;  // "ok", "crashed", "timeout", "exited", "failed_to_start", "not_run"
  int signal = 0;      // crashed: the signal
  int exit_code = 0;   // exited: the code
  double seconds = 0;  // wall time of the child
  std::string message; // anything the child or the parent said about it
  std::string last_call;  // the vendor call it was in when it did not finish ("cuInit"), if known
  bool operator==(const ChildOutcome&) const = default;
};

struct NvmlGpu {
  int index = 0;
  std::string name;          // nvmlDeviceGetName
  std::string uuid;
  std::string pci_bus_id;    // normalised to sysfs form, "0000:01:00.0"
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_used_bytes = 0;
  int temperature_c = -1;     // -1 unknown
  int utilization_gpu_pct = -1;
  int utilization_memory_pct = -1;
  int power_limit_w = -1;     // from milliwatts
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
  std::string persistence_mode;  // "enabled", "disabled", "" unknown
  std::string mig_mode;          // "enabled", "disabled", "" unsupported
  std::string compute_capability;  // "9.0"
  std::vector<std::string> errors;  // "nvmlDeviceGetPowerManagementLimit: Not Supported"
  bool operator==(const NvmlGpu&) const = default;
};

struct NvmlFacts {
  std::string library;        // logical path of libnvidia-ml.so.1 used, "" if none found
  ChildOutcome outcome;
  int init_code = -1;         // nvmlInit_v2 return, -1 not called
  std::string init_error_name;    // "NVML_ERROR_DRIVER_NOT_LOADED"
  std::string init_error_string;  // nvmlErrorString: "Driver Not Loaded"
  std::string driver_version;     // nvmlSystemGetDriverVersion
  int cuda_driver_version = 0;    // nvmlSystemGetCudaDriverVersion_v2, 12020
  std::vector<NvmlGpu> gpus;  // as NVML listed them; gather() moves them into Snapshot::gpus
  bool operator==(const NvmlFacts&) const = default;
};

struct DriverFacts {
  std::vector<ModuleState> modules;     // nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nouveau
  bool modules_listed = false;          // /proc/modules was read
  std::vector<Blacklist> blacklists;
  KernelModule kernel_module;
  std::vector<std::string> module_files;  // nvidia.ko* under /lib/modules/<running kernel>
  std::vector<DeviceNode> device_nodes;
  std::string nvidia_modprobe;          // path of the nvidia-modprobe helper, "" if not installed
  bool nvidia_modprobe_setuid = false;  // setuid root: CUDA can then create nodes and load nvidia-uvm itself
  std::vector<DriverLibrary> libraries;  // libcuda.so.1, libnvidia-ml.so.1
  NvmlFacts nvml;
  std::vector<PciDevice> other_display_devices;  // display controllers not made by NVIDIA
  bool pci_listed = false;                       // /sys/bus/pci/devices was read
  bool operator==(const DriverFacts&) const = default;
};

// An NVIDIA GPU: its PCI function and, when NVML answered, NVML's view of it.
struct Gpu {
  PciDevice pci;               // address empty when NVML sees a GPU sysfs does not show
  std::optional<NvmlGpu> nvml;
  bool operator==(const Gpu&) const = default;
};

// L2: one piece of evidence for a toolkit's version.
struct VersionWitness {
  std::string source;   // "version.json", "nvcc binary" (its embedded banner), "libcudart.so.12.2.140", "dist-info nvidia_cuda_runtime-13.0.96"
  std::string version;  // "12.2.140"
  bool operator==(const VersionWitness&) const = default;
};

struct ToolkitComponent {
  std::string name;     // cudart, cublas, cufft, cusparse, cudnn, nccl, nvrtc, nvjitlink
  std::string version;  // "12.2.5.6", "" unknown
  std::string library;  // logical path of the library file
  bool operator==(const ToolkitComponent&) const = default;
};

// A CUDA toolkit installation.
struct Toolkit {
  std::string root;       // logical, canonical: /usr/local/cuda-12.2, /usr/lib/nvidia-cuda-toolkit
  std::vector<std::string> found_by;  // "/usr/local/cuda-* directory", "/usr/local/cuda link", "CUDA_HOME", "nvcc on PATH", …
  std::string layout;     // "nvidia" (bin, lib64 under one root), "debian" (nvidia-cuda-toolkit), "conda"
  std::string version;    // the best witness: nvcc's, else the runtime's
  std::vector<VersionWitness> witnesses;
  std::string nvcc;       // logical path, "" when the toolkit has none
  std::string bin_dir;
  std::string lib_dir;
  std::vector<ToolkitComponent> components;
  std::vector<std::string> nvcc_archs;  // unused since nvcc is no longer run (kept for the schema)
  std::vector<std::string> missing;     // parts expected but absent: "bin/nvcc", "libcudart"
  bool operator==(const Toolkit&) const = default;
};

// A line of a global shell or loader configuration file that sets CUDA paths.
struct GlobalSetting {
  std::string file;
  int line = 0;
  std::string text;
  bool operator==(const GlobalSetting&) const = default;
};

struct LoaderPick {
  std::string soname;  // "libcudart.so.12"
  std::string path;    // "" when the loader finds none
  std::string rule;    // "ld.so.cache", "LD_LIBRARY_PATH", …
  bool operator==(const LoaderPick&) const = default;
};

struct ToolkitFacts {
  std::vector<Toolkit> toolkits;
  std::string cuda_link_target;  // /usr/local/cuda -> as written, "" when absent
  std::string cuda_link_resolved;  // canonical, "" when dangling or absent
  std::string path_nvcc;          // the first nvcc on PATH (logical), "" none
  std::string path_nvcc_real;
  std::optional<std::string> cuda_home, cuda_path, cuda_root;  // environment
  std::vector<std::string> path;             // PATH entries
  std::vector<std::string> ld_library_path;  // LD_LIBRARY_PATH entries
  std::vector<std::string> ld_so_conf_dirs;  // directories /etc/ld.so.conf(.d) names, with the file
  std::vector<GlobalSetting> global_settings;
  std::vector<LoaderPick> cudart_picks;  // libcudart.so.<major> for each toolkit major, as the loader finds it
  bool operator==(const ToolkitFacts&) const = default;
};

// L3: a CUDA library in a framework's dependency tree, as the loader resolves it.
struct FrameworkLibrary {
  std::string soname;   // "libcublas.so.12"
  std::string path;     // where the loader takes it from, "" when not found
  std::string rule;     // "DT_RUNPATH", "LD_LIBRARY_PATH", "ld.so.cache", …
  std::string version;  // from the real file name, "" unknown
  std::string bundled;  // the copy the framework ships (site-packages/nvidia/*/lib, its own lib dir), "" none
  bool operator==(const FrameworkLibrary&) const = default;
};

struct Framework {
  std::string name;      // torch, tensorflow, jax, cupy, onnxruntime
  std::string version;   // "2.5.1+cu124"
  std::string cuda;      // the CUDA it was built for, "" for a CPU-only build
  std::string hip;       // ROCm build
  std::string cudnn;
  std::string location;  // logical path of the package
  std::string source;    // where the facts come from: "torch/version.py"
  std::string gpu_library;  // the library whose tree was resolved
  std::vector<FrameworkLibrary> libraries;
  std::vector<std::string> missing;           // sonames not found (libcuda.so.1 excepted)
  std::vector<std::string> missing_versions;  // "GLIBCXX_3.4.32 (in /usr/lib/…/libstdc++.so.6)"
  std::vector<std::string> sm_archs;          // in its own libraries' fatbins
  std::vector<std::string> ptx_archs;
  std::vector<std::string> requires_nvidia;   // Requires-Dist: "nvidia-cudnn-cu12==9.1.0.70"
  std::string error;                          // the GPU library could not be read
  // Who installed it: the dist-info's INSTALLER ("pip", "uv", "conda"), else "conda" when the
  // environment's conda-meta names the package, else "" unknown.
  std::string installer;
  // Found only in the base interpreter's (or the user's) site-packages, which a venv made
  // with include-system-site-packages = true imports after its own.
  bool inherited = false;
  bool operator==(const Framework&) const = default;
};

struct PythonEnv {
  std::string prefix;       // logical: /usr, /home/a/venv, /opt/conda/envs/x
  std::string interpreter;  // bin/python3 (logical), "" unknown
  std::string version;      // "3.11"
  std::string kind;         // system, venv, conda, pyenv, given
  std::vector<std::string> found_by;
  std::vector<std::string> site_packages;  // in import order
  std::vector<Framework> frameworks;
  std::vector<std::pair<std::string, std::string>> nvidia_packages;  // dist-info name -> version
  // pyvenv.cfg include-system-site-packages = true: site_packages then ends with the base
  // environment's directories (site.py adds them after the venv's own).
  bool system_site_packages = false;
  std::string base_prefix;  // a venv's base: the parent of pyvenv.cfg `home` (the base's bin), "" otherwise
  bool conda_meta = false;  // <prefix>/conda-meta exists: a conda environment, whatever kind says
  bool operator==(const PythonEnv&) const = default;
};

// A list of candidate environments longer than the probe inspects: only its first entries
// (in the list's order) were looked at.
struct EnvListCut {
  std::string source;           // logical path: "/opt/conda/envs", "/root/.conda/environments.txt"
  std::uint64_t entries = 0;    // entries the list holds
  std::uint64_t inspected = 0;  // how many of them were inspected
  bool operator==(const EnvListCut&) const = default;
};

struct PythonFacts {
  std::string path_python;       // the python3 (or python) first on PATH, logical
  std::string path_python_env;   // the prefix of its environment
  std::vector<PythonEnv> envs;
  std::vector<EnvListCut> lists_cut;  // lists of environments not inspected to the end
  bool operator==(const PythonFacts&) const = default;
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
  std::string library;        // logical path
  std::string origin;         // what it belongs to: "toolkit /usr/local/cuda-13.0"
  std::string driver_library; // the libcuda preloaded for it, "" when none exists
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
  double gb_per_s = 0;  // 1e9 bytes per second
  bool matches = false; // the bytes came back unchanged (d2h after h2d)
  bool operator==(const CopyCheck&) const = default;
};

struct GemmCheck {
  std::string dtype;  // fp32, fp16, bf16 (inputs; accumulation and output in fp32)
  int m = 0, n = 0, k = 0;
  double max_abs_error = 0;  // against a CPU product of the same inputs, in double
  double tolerance = 0;      // allowed max_abs_error for this size and type
  bool passed = false;
  double tflops = 0;         // from a larger product, timed
  int throughput_size = 0;   // n of the n x n x n product timed
  CudaCall status;           // the first failing call, code 0 when all succeeded
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
  bool ran = false;  // false with --no-runtime, or under --root without --runtime
  std::string not_run_reason;  // why not, when ran is false and probes were wanted
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
  std::vector<Unreadable> unreadable;
  bool operator==(const Snapshot&) const = default;
};

}  // namespace cudoctor::snapshot
