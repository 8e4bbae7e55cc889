#pragma once
// The snapshot's settings facts: the variables, module parameters and nvidia-smi settings that
// change how CUDA work runs, and every place each is set (snapshot.hpp includes this file;
// include that one). `cudoctor tune` and check's tuning findings judge them.
#include <string>
#include <vector>

namespace cudoctor::snapshot {

// One setting, where it was found.
struct Setting {
  std::string name;    // "CUDA_LAUNCH_BLOCKING", "i915.enable_rc6", "nvidia-smi -pl"
  std::string value;   // as written, quotes removed, nothing expanded; "" set empty
  std::string kind;    // "env", "module" (a kernel module parameter), "nvidia-smi" (a command that sets it)
  std::string source;  // "environment", or the logical path of the file it is written in
  int line = 0;        // 1-based line in source; 0 for the environment
  // How it comes into effect: "process" (in cudoctor's own environment, so in the shell that
  // ran it), "shell" (a shell start-up file), "system" (/etc/environment, /etc/profile*),
  // "conda" or "venv" (an environment's activation), "service" (a systemd unit), "nccl-conf"
  // (an NCCL configuration file), "module-load" (modprobe.d), "boot" (the running kernel's
  // command line), "next-boot" (the boot loader's configuration).
  std::string scope;
  bool owned = false;  // the file belongs to the effective user, who may edit it without root
  // How the file is written: "sh", "fish", "csh", "environment" (pam_env), "systemd", "nccl",
  // "modprobe", "grub", "cmdline", "conda_state", "commands" (rc.local, cron); "" the environment.
  std::string syntax;
  bool alone = false;   // its line sets this and nothing else (commenting it out takes only this)
  std::string written;  // a command line's or options line's word as written: "nvidia-drm.modeset=1"
  bool operator==(const Setting&) const = default;
};

// What the running kernel says of a module parameter that a setting names.
struct ModuleParam {
  std::string name;            // "i915.enable_rc6"
  bool module_loaded = false;  // /sys/module/<module> exists
  bool exists = false;         // the loaded module has this parameter
  std::string value;           // its active value, "" when it cannot be read
  std::string source;          // "/sys/module/i915/parameters/enable_rc6", "/proc/driver/nvidia/params"
  bool operator==(const ModuleParam&) const = default;
};

// Whether a framework's libraries hold a word as a string: the keys a PYTORCH_CUDA_ALLOC_CONF
// setting uses, looked up in the torch that would read them.
struct LibraryWords {
  std::string framework;               // "torch"
  std::string location;                // the framework's logical path (Framework::location)
  std::vector<std::string> libraries;  // the logical paths searched
  std::vector<std::string> present;
  std::vector<std::string> absent;
  bool operator==(const LibraryWords&) const = default;
};

struct SettingsFacts {
  std::vector<Setting> settings;        // environment first, then files in the order read
  std::vector<std::string> files_read;  // the start-up and configuration files that exist and were read
  std::vector<ModuleParam> module_params;
  std::vector<LibraryWords> allocator_keys;
  bool operator==(const SettingsFacts&) const = default;
};

}  // namespace cudoctor::snapshot
