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

std::string quote(std::string_view s) {
  if (s.find_first_of(" '\"$`\\!*?[]{}()<>|&;#~") == std::string_view::npos && !s.empty()) return std::string(s);
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string as_root(const view::Machine& m, std::string_view cmd) {
  if (m.root) return std::string(cmd);
  if (m.has_tool("sudo")) return "sudo " + std::string(cmd);
  return "su -c " + quote(cmd);
}

std::string install_packages(const view::Machine& m, const Packages& p) {
  const auto& names = m.distro_family == "debian" ? (m.snap.host.os_id == "ubuntu" || m.is_like("ubuntu") ? p.ubuntu : p.debian)
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
    case view::PackageManager::apt: return as_root(m, std::string(installed ? "apt-get install --reinstall" : "apt-get install") + list);
    case view::PackageManager::dnf:
    case view::PackageManager::yum: {
      const auto tool = m.package_manager == view::PackageManager::dnf ? "dnf" : "yum";
      return as_root(m, fmt::format("{} {}{}", tool, installed ? "reinstall" : "install", list));
    }
    case view::PackageManager::zypper: return as_root(m, std::string(installed ? "zypper install -f" : "zypper install") + list);
    case view::PackageManager::pacman: return as_root(m, "pacman -S" + list);
    case view::PackageManager::unknown: break;
  }
  return "";
}

std::string rebuild_initramfs(const view::Machine& m) {
  auto tool = m.initramfs;
  if (tool == view::Initramfs::unknown) {
    if (m.has_tool("update-initramfs")) tool = view::Initramfs::update_initramfs;
    else if (m.has_tool("dracut")) tool = view::Initramfs::dracut;
    else if (m.has_tool("mkinitcpio")) tool = view::Initramfs::mkinitcpio;
  }
  switch (tool) {
    case view::Initramfs::update_initramfs: return as_root(m, "update-initramfs -u");
    case view::Initramfs::dracut: return as_root(m, "dracut --force");
    case view::Initramfs::mkinitcpio: return as_root(m, "mkinitcpio -P");
    case view::Initramfs::unknown: break;
  }
  return "";
}

std::vector<std::string> pip_install(const view::Machine& m, const snapshot::PythonEnv& env,
                                     const snapshot::Framework* replacing, const std::string& install_line) {
  std::vector<std::string> out;
  const auto rest = install_line.starts_with("pip ") ? install_line.substr(4) : std::string();
  const auto kind = m.env_kind(env);
  std::string python = env.interpreter.empty() ? "python3" : quote(env.interpreter);
  if (kind == view::EnvKind::system) {
    // The distribution's Python belongs to its package manager (PEP 668): a venv of its own.
    out.push_back(fmt::format("{} -m venv ~/.venvs/gpu", python));
    python = "~/.venvs/gpu/bin/python";
  } else if (replacing && replacing->installer == "conda") {
    const char* conda = m.has_tool("conda") ? "conda" : m.has_tool("mamba") ? "mamba" : m.has_tool("micromamba") ? "micromamba" : "conda";
    out.push_back(fmt::format("{} remove -y -p {} {}", conda, quote(env.prefix), conda_name(replacing->name)));
  }
  if (rest.empty()) return out;
  out.push_back(fmt::format("{} -m pip install {}", python, rest));
  return out;
}

std::string plan_command(const view::Machine& m) {
  // plan reads the GPU and the driver from the machine; it needs one of them.
  if (m.gpus.empty() && !m.driver.version) return "";
  return "cudoctor plan";
}

std::string list_nvidia_pci(const view::Machine& m) {
  if (m.has_tool("lspci")) return "lspci -nn -d 10de:";
  return "grep -l 0x10de /sys/bus/pci/devices/*/vendor";
}

}  // namespace cudoctor::rules::fixes
