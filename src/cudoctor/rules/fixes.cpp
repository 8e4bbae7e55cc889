#include "cudoctor/rules/fixes.hpp"

#include <fmt/format.h>

namespace cudoctor::rules::fixes {
namespace {

// The conda package name of a framework, as conda-forge and the pytorch channel call it.
std::string conda_name(const std::string& framework) {
  if (framework == "torch") return "pytorch";
  if (framework == "jax") return "jaxlib";
  return framework;
}

}  // namespace

std::string shell_quote(std::string_view s) {
  // Characters the shell reads specially anywhere in a word, and control characters; '=' and
  // '%' only matter at the start of some words and are left as they are.
  bool plain = !s.empty();
  for (const char c : s)
    plain = plain && std::string_view(" \t\n'\"$`\\!*?[]{}()<>|&;#~^").find(c) == std::string_view::npos &&
            static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  if (plain) return std::string(s);
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string as_root(const view::Machine& m, std::string_view cmd) {
  if (m.root) return std::string(cmd);
  if (m.has_tool("sudo")) return "sudo " + std::string(cmd);
  return "su -c " + shell_quote(cmd);
}

std::string remove_packages(const view::Machine& m, const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list;
  for (const auto& n : names) list += " " + shell_quote(n);
  switch (m.package_manager) {
    case view::PackageManager::apt:
      return as_root(m, "apt-get remove --purge" + list);
    case view::PackageManager::dnf:
      return as_root(m, "dnf remove" + list);
    case view::PackageManager::yum:
      return as_root(m, "yum remove" + list);
    case view::PackageManager::zypper:
      return as_root(m, "zypper remove" + list);
    case view::PackageManager::pacman:
      return as_root(m, "pacman -Rns" + list);
    case view::PackageManager::unknown:
      break;
  }
  return "";
}

std::string install_packages(const view::Machine& m, const Packages& p) {
  const auto& names = m.distro_family == "debian"
                          ? (m.snap.host.os_id == "ubuntu" || m.is_like("ubuntu") ? p.ubuntu : p.debian)
                      : m.distro_family == "fedora" ? p.fedora
                      : m.distro_family == "suse"   ? p.suse
                      : m.distro_family == "arch"   ? p.arch
                                                    : p.debian;
  if (m.package_manager == view::PackageManager::unknown || names.empty()) return "";
  bool installed = true;
  std::string list;
  for (const auto& n : names) {
    installed = installed && m.package_installed(n);
    list += " " + n;
  }
  switch (m.package_manager) {
    case view::PackageManager::apt:
      return as_root(m, std::string(installed ? "apt-get install --reinstall" : "apt-get install") + list);
    case view::PackageManager::dnf:
    case view::PackageManager::yum: {
      const auto tool = m.package_manager == view::PackageManager::dnf ? "dnf" : "yum";
      return as_root(m, fmt::format("{} {}{}", tool, installed ? "reinstall" : "install", list));
    }
    case view::PackageManager::zypper:
      return as_root(m, std::string(installed ? "zypper install -f" : "zypper install") + list);
    case view::PackageManager::pacman:
      return as_root(m, "pacman -S" + list);
    case view::PackageManager::unknown:
      break;
  }
  return "";
}

std::string rebuild_initramfs(const view::Machine& m) {
  auto tool = m.initramfs;
  if (tool == view::Initramfs::unknown) {
    if (m.has_tool("update-initramfs"))
      tool = view::Initramfs::update_initramfs;
    else if (m.has_tool("dracut"))
      tool = view::Initramfs::dracut;
    else if (m.has_tool("mkinitcpio"))
      tool = view::Initramfs::mkinitcpio;
  }
  switch (tool) {
    case view::Initramfs::update_initramfs:
      return as_root(m, "update-initramfs -u");
    case view::Initramfs::dracut:
      return as_root(m, "dracut --force");
    case view::Initramfs::mkinitcpio:
      return as_root(m, "mkinitcpio -P");
    case view::Initramfs::unknown:
      break;
  }
  return "";
}

std::string python_of(const snapshot::PythonEnv& env) {
  if (!env.interpreter.empty()) return shell_quote(env.interpreter);
  if (!env.prefix.empty() && env.kind != "system") return shell_quote(env.prefix + "/bin/python3");
  return "python3";
}

std::vector<std::string> pip_install(const view::Machine& m, const snapshot::PythonEnv& env,
                                     const snapshot::Framework* replacing, const std::string& install_line) {
  std::vector<std::string> out;
  if (!install_line.starts_with("pip ")) return out;
  const auto rest = install_line.substr(4);
  const auto kind = m.env_kind(env);
  auto python = python_of(env);
  if (kind == view::EnvKind::system) {
    // The distribution's Python belongs to its package manager (PEP 668): a venv of its own.
    out.push_back(fmt::format("{} -m venv ~/.venvs/gpu", python));
    python = "~/.venvs/gpu/bin/python";
  } else if (replacing && replacing->installer == "conda" && !replacing->inherited) {
    const char* conda = m.has_tool("conda")        ? "conda"
                        : m.has_tool("mamba")      ? "mamba"
                        : m.has_tool("micromamba") ? "micromamba"
                                                   : "conda";
    out.push_back(fmt::format("{} remove -y -p {} {}", conda, shell_quote(env.prefix), conda_name(replacing->name)));
  }
  out.push_back(fmt::format("{} -m pip {}", python, rest));
  return out;
}

std::string plan_command(const view::Machine& m) {
  // plan reads the GPU and the driver from the machine; it needs one of them.
  if (m.gpus.empty() && !m.driver.version) return "";
  return "cudoctor plan";
}

std::string drop_from_ld_library_path(const std::vector<std::string>& dirs) {
  std::string patterns;
  for (const auto& d : dirs) patterns += " -e " + shell_quote(d);
  // grep -x -F: each entry compared whole and literally, so a '.' in a path is a '.'.
  return fmt::format(
      "export LD_LIBRARY_PATH=\"$(printf '%s' \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -v -x -F{} | paste -sd:)\"",
      patterns);
}

std::string list_nvidia_pci(const view::Machine& m) {
  if (m.has_tool("lspci")) return "lspci -nn -d 10de:";
  return "grep -l 0x10de /sys/bus/pci/devices/*/vendor";
}

}  // namespace cudoctor::rules::fixes
