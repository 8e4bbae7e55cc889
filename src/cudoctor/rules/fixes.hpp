#pragma once
// Fix commands built for the machine they are printed on: its package manager and initramfs
// tool, root or sudo, the kind of each Python environment, the helper programs it has. Every
// rule builds its commands here, so that a fix never names a tool that is absent or a command
// that cannot work where it is printed.
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules::fixes {

// cmd run as root: as it is for root, with sudo where sudo is installed, else through su.
std::string as_root(const view::Machine& m, std::string_view cmd);

// s as one shell word: as it is when it holds nothing the shell would read, else in single
// quotes.
std::string shell_quote(std::string_view s);

// Distribution packages by family; "" where a family has none.
struct Packages {
  std::vector<std::string> debian, ubuntu, fedora, suse, arch;
};
// The command that installs them with this machine's package manager, reinstalling those
// already installed (apt-get install --reinstall, dnf reinstall, zypper install -f,
// pacman -S); "" when the distribution is unknown or has no such package.
std::string install_packages(const view::Machine& m, const Packages& p);

// The command that removes these installed packages with this machine's package manager
// (apt-get remove --purge, dnf remove, zypper remove, pacman -Rns); "" when none is known.
std::string remove_packages(const view::Machine& m, const std::vector<std::string>& names);

// Rebuilds the initramfs with this distribution's tool (update-initramfs, dracut, mkinitcpio),
// or the one installed when the distribution is unknown; "" when none is known.
std::string rebuild_initramfs(const view::Machine& m);

// Replaces the leading `pip` of a knowledge-base install line with this environment's own
// interpreter, and for an environment pip must not touch (the distribution's Python), first
// makes a virtual environment from that interpreter. A framework that conda installed in this
// environment is removed with conda first, so that pip's copy is not mixed with conda's (one a
// venv inherits from its base is left to the base). Empty when install_line is not a pip line.
std::vector<std::string> pip_install(const view::Machine& m, const snapshot::PythonEnv& env,
                                     const snapshot::Framework* replacing, const std::string& install_line);

// The interpreter that runs this environment's pip: the probe's, else <prefix>/bin/python3
// for an environment with its own prefix, else "python3"; quoted for the shell.
std::string python_of(const snapshot::PythonEnv& env);

// Takes these directories off LD_LIBRARY_PATH in the current shell (each entry compared whole).
std::string drop_from_ld_library_path(const std::vector<std::string>& dirs);

// `cudoctor plan` with what this machine lacks given on the command line; "" when the machine
// shows neither a GPU nor a driver, and so there is nothing to plan from.
std::string plan_command(const view::Machine& m);

// A check command that lists NVIDIA PCI functions without lspci when lspci is absent.
std::string list_nvidia_pci(const view::Machine& m);

}  // namespace cudoctor::rules::fixes
