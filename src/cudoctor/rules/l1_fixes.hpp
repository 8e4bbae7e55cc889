#pragma once
// The fixes of the L1 (driver) findings, built for the machine they are printed on: its
// distribution's packages and initramfs tool, root, sudo or su, the helper programs it has.
// In a container a fix that must run on the host (loading a module, making device nodes,
// installing the driver) is said in the text ("On the host: …"), never given as a command.
// Commands that only look are checks. driver_rules.cpp decides; this file only builds.
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules::l1 {

using fixes::shell_quote;  // one quoting for every rule family

// The driver branch the machine's packages should carry: the running driver's (535 for
// 535.104.05), else the legacy branch that is the last for its GPUs (Kepler: 470); nullopt
// when neither is known.
std::optional<int> driver_branch(const view::Machine& m, const kb::KnowledgeBase& kb);
// Whether that branch is a legacy one: the GPU's architecture left the current drivers.
bool legacy_branch(const view::Machine& m, const kb::KnowledgeBase& kb);

// nouveau holds a GPU: blacklist it, rebuild the initramfs, install the driver, reboot.
Fix nouveau_fix(const view::Machine& m, const kb::KnowledgeBase& kb);
// The GPU is bound to vfio-pci or pci-stub.
Fix vfio_fix(const view::Machine& m);
// The module is loaded and left a GPU unbound.
Fix unbound_fix(const view::Machine& m);
// The driver is older than a GPU: a driver of branch need or newer.
Fix driver_too_old_fix(const view::Machine& m, const util::Version& need);
// The driver dropped the GPU's architecture: the legacy branch's driver.
Fix driver_too_new_fix(const view::Machine& m, int last_branch);

// The host has no nvidia module loaded and cudoctor runs in a container.
Fix module_on_host_fix();
// modprobe.d lines or kernel parameters that blacklist nvidia.
Fix blacklist_fix(const view::Machine& m, const std::vector<const snapshot::Blacklist*>& blocks);
Fix secure_boot_fix(const view::Machine& m);
// The module is not loaded; module_installed: an nvidia.ko exists for the running kernel.
Fix module_not_loaded_fix(const view::Machine& m, const kb::KnowledgeBase& kb, bool module_installed);

// nvidia-uvm or its node is missing.
Fix uvm_fix(const view::Machine& m, bool module_loaded, bool node_present);
// /dev/nvidiactl (ctl_missing) or the /dev/nvidiaN of these minors are missing.
Fix nodes_fix(const view::Machine& m, bool ctl_missing, const std::vector<unsigned>& missing_minors);
Fix nodes_not_permitted_fix(const view::Machine& m);

// libcuda.so.1 is not found: from its candidates (a dangling link, a copy off the loader's
// path, one the loader passed over), else not installed. title is set where a candidate
// explains it better than the catalog's "not installed".
Fix library_missing_fix(const view::Machine& m, const kb::KnowledgeBase& kb, const snapshot::DriverLibrary* lib,
                        std::string& title);
// Kernel module and user-space driver of different releases.
Fix version_mismatch_fix(const view::Machine& m);

// Checks that only look: nvidia-smi (when installed) and the kernel log.
std::vector<std::string> nvml_checks(const view::Machine& m, const std::string& nvidia_smi_args,
                                     const std::string& dmesg_pattern);
// `dmesg | grep -i <pattern>` with dmesg as root.
std::string dmesg_check(const view::Machine& m, const std::string& pattern);

// The container was started without GPUs, per runtime.
Fix container_no_access_fix(const std::string& kind);
// The container's NVIDIA_DRIVER_CAPABILITIES names no compute capability.
Fix capability_fix(const std::string& kind, const snapshot::EnvVar& var);

}  // namespace cudoctor::rules::l1
