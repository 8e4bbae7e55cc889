#pragma once
// The snapshot's L0 facts: distribution, kernel, identity, container, helper programs,
// packages, environment (snapshot.hpp includes this file; include that one).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudoctor::snapshot {

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
  std::string os_id;                // /etc/os-release ID, "debian"
  std::string os_version;           // VERSION_ID, "12"
  std::string os_pretty_name;       // PRETTY_NAME
  std::string kernel;               // /proc/sys/kernel/osrelease
  std::string arch;                 // /proc/sys/kernel/arch, "x86_64"
  std::string hostname;             // /proc/sys/kernel/hostname
  std::string user;                 // effective user name, "" if not in the password database
  std::uint32_t uid = 0;            // effective uid
  std::vector<std::uint32_t> gids;  // effective gid, then supplementary groups
  Detected container;               // kind: docker, podman, kubernetes, apptainer, lxc, systemd-nspawn
  Detected wsl;                     // kind: "wsl2" or "wsl1"
  Detected hypervisor;              // kind: kvm, vmware, hyperv, xen, … or "unknown" with the cpu flag only
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

}  // namespace cudoctor::snapshot
