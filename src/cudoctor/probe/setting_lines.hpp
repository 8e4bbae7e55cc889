#pragma once
// Reading settings out of the lines of the files that set them: shell start-up files, fish and
// csh, /etc/environment, systemd units, modprobe.d, kernel command lines, nvidia-smi commands.
// Nothing is evaluated: a value is what the line writes, quotes removed, `$X` left as it is.
#include <string>
#include <string_view>
#include <vector>

namespace cudoctor::probe::lines {

struct Assignment {
  std::string name;
  std::string value;
  bool operator==(const Assignment&) const = default;
};

// Whether a line does nothing but set one thing (an `export A=1`, an `options m p=1`, an
// `Environment=A=1`): commenting it out then takes away that one setting and nothing else.
bool sets_one_thing(std::string_view line);
// The word of a kernel command line or modprobe options line that sets name ("nvidia-drm.modeset=1",
// "NVreg_EnableGpuFirmware=0"), as written; "" when none does.
std::string written_word(std::string_view line, const std::string& name);

// The words of a shell command line: '…' and "…" (with \ escapes) unquoted, an unquoted # that
// starts a word ends the line, ; && || and | end a command (returned as ";"). false in
// unbalanced quotes.
bool shell_words(std::string_view line, std::vector<std::string>& words);

// POSIX shells (sh, bash, zsh, conda's activate.d): `export A=1 B=2`, `declare -x A=1`, also
// after `then`, `else`, `do`, `{`. A bare `A=1` is not exported, so no program sees it: skipped
// (and so is A=1 before a command, which sets it for that command only).
std::vector<Assignment> shell_assignments(std::string_view line);
// fish: `set -gx A 1` (any of -x --export with -g -U); csh: `setenv A 1`.
std::vector<Assignment> fish_or_csh_assignments(std::string_view line);
// /etc/environment (pam_env): NAME=value, optionally quoted.
std::vector<Assignment> plain_assignments(std::string_view line);
// NCCL's configuration files: NAME=value, taken as written (NCCL removes no quotes).
std::vector<Assignment> nccl_conf_assignments(std::string_view line);
// A systemd unit's Environment= (space-separated, each optionally quoted) or
// DefaultEnvironment= line.
std::vector<Assignment> systemd_environment(std::string_view line);
// modprobe.d `options MODULE p=v …`: names "module.p" (dashes in the module name as _).
std::vector<Assignment> modprobe_options(std::string_view line);
// A kernel command line's `module.param=value` words.
std::vector<Assignment> cmdline_params(std::string_view cmdline);
// /etc/default/grub GRUB_CMDLINE_LINUX= and GRUB_CMDLINE_LINUX_DEFAULT=: the quoted command
// line, "" when the line sets neither.
std::string grub_cmdline(std::string_view line);
// The settings an `nvidia-smi` command applies: "nvidia-smi -pl" 250, "nvidia-smi -ac"
// "5001,1590", "nvidia-smi -pm" 1, "nvidia-smi -lgc", "nvidia-smi -lmc", "nvidia-smi -rac",
// "nvidia-smi -rgc" (long options taken to their short names). Empty when the line runs no
// nvidia-smi, or runs one of its subcommands (dmon, pmon, topo, nvlink, mig …), which set nothing.
std::vector<Assignment> nvidia_smi_settings(std::string_view line);

}  // namespace cudoctor::probe::lines
