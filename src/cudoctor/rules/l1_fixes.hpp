#pragma once
// The pieces the fixes of the L1 (driver) findings are built from, for the machine they are
// printed on: its distribution's driver packages, root, sudo or su, the helper programs it has.
// Each rule family builds its own fixes from these, beside the rule (l1_binding.cpp, …).
// In a container a fix that must run on the host (loading a module, making device nodes,
// installing the driver) is said in the text ("On the host: …"), never given as a command.
// Commands that only look are checks.
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

// Ubuntu or a distribution like it (ubuntu-drivers, shim-signed's MOK).
bool ubuntu(const view::Machine& m);
// Appends s unless it is empty (a command this machine has no way to run).
void push_nonempty(std::vector<std::string>& v, std::string s);
// `producer | tee file` as root. sudo reads its password from the terminal; su reads it from
// standard input, which the pipe holds, so through su the whole line runs as root.
std::string write_as_root(const view::Machine& m, const std::string& producer, const std::string& file);
// The commands that install the NVIDIA driver, kernel module and user space; empty where no
// package is known. A legacy branch is pinned where the distribution packages it by name.
std::vector<std::string> install_driver(const view::Machine& m, std::optional<int> branch, bool legacy);
// Where the driver packages come from, where that needs a step the commands do not take
// (" akmod-nvidia comes from RPM Fusion, …"); "" where none.
std::string driver_source_note(const view::Machine& m, bool legacy, std::optional<int> branch);

// Checks that only look: nvidia-smi (when installed) and the kernel log.
std::vector<std::string> nvml_checks(const view::Machine& m, const std::string& nvidia_smi_args,
                                     const std::string& dmesg_pattern);
// `dmesg | grep -i <pattern>` with dmesg as root.
std::string dmesg_check(const view::Machine& m, const std::string& pattern);

}  // namespace cudoctor::rules::l1
