#pragma once
// The machine as the rules and the planner see it: facts that several of them need, derived
// from the snapshot once, each with the witness it came from. No rule re-derives any of these;
// a rule that needs a new one adds it here.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::view {

// Where the driver's version was read.
enum class DriverWitness { none, kernel_module, nvml, libcuda_file };
std::string_view to_string(DriverWitness w);  // "kernel module", "NVML", "libcuda.so.1's file name", "none"

struct Driver {
  std::optional<util::Version> version;
  DriverWitness witness = DriverWitness::none;
  std::string source;  // "/proc/driver/nvidia/version", "NVML", the libcuda file's real path
};

// A GPU whose compute capability is known.
struct GpuCc {
  util::Version cc;
  std::string name;    // NVML's name, else the knowledge base's model name
  std::string source;  // "NVML", "PCI id 10de:2684"
  const snapshot::Gpu* gpu = nullptr;
};

enum class EnvKind { system, venv, venv_system_site, conda, pyenv, given, other };
std::string_view to_string(EnvKind k);

enum class PackageManager { unknown, apt, dnf, yum, zypper, pacman };
std::string_view to_string(PackageManager p);  // the command: "apt", "dnf", …
enum class Initramfs { unknown, update_initramfs, dracut, mkinitcpio };

struct Machine {
  explicit Machine(const snapshot::Snapshot& s) : snap(s) {}
  const snapshot::Snapshot& snap;
  Driver driver;
  std::vector<GpuCc> gpus;         // in snapshot order, those whose compute capability is known
  std::vector<util::Version> ccs;  // distinct compute capabilities of those GPUs
  bool root = false;               // effective uid 0
  bool in_container = false;
  std::string container_kind;
  bool wsl2 = false;
  bool nvidia_loaded = false;  // /proc/modules or /proc/driver/nvidia says so
  bool jit_disabled = false;   // CUDA_DISABLE_PTX_JIT=1
  std::string distro_family;   // "debian", "fedora", "suse", "arch", "" unknown
  PackageManager package_manager = PackageManager::unknown;
  Initramfs initramfs = Initramfs::unknown;

  bool module_loaded(std::string_view name) const;
  // Whether a helper program is installed (HostFacts::tools).
  bool has_tool(std::string_view name) const;
  // Whether os-release ID or ID_LIKE names this distribution.
  bool is_like(std::string_view id) const;
  // An NVIDIA or CUDA variable's value (HostFacts::nvidia_env), nullopt when unset.
  const snapshot::EnvVar* nvidia_env(std::string_view name) const;
  // Whether a distribution package is installed; false also when unknown (packages_known).
  bool package_installed(std::string_view name) const;
  // Whether the machine's package database was read, so that "not installed" means it.
  bool packages_known() const;
  EnvKind env_kind(const snapshot::PythonEnv& e) const;
  // The environment's Python version (3.11), nullopt when unknown.
  std::optional<util::Version> python_version(const snapshot::PythonEnv& e) const;
};

Machine derive(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);

}  // namespace cudoctor::view
