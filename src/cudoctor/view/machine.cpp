#include "cudoctor/view/machine.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cudoctor::view {
namespace {

Driver driver_of(const snapshot::Snapshot& s) {
  const auto& d = s.driver;
  // The kernel module is the driver; NVML reports the same number; the user-space library's
  // file name is the last resort (a container shows the host's libcuda, not its module).
  if (auto v = util::Version::parse(d.kernel_module.version))
    return {v, DriverWitness::kernel_module, d.kernel_module.version_source};
  if (auto v = util::Version::parse(d.nvml.driver_version)) return {v, DriverWitness::nvml, "NVML"};
  for (const auto& l : d.libraries)
    if (l.soname == "libcuda.so.1" && !l.path.empty())
      if (auto v = util::Version::parse(l.version)) return {v, DriverWitness::libcuda_file, l.real_path};
  return {};
}

bool has(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

std::string_view to_string(DriverWitness w) {
  switch (w) {
    case DriverWitness::none:
      return "none";
    case DriverWitness::kernel_module:
      return "kernel module";
    case DriverWitness::nvml:
      return "NVML";
    case DriverWitness::libcuda_file:
      return "libcuda.so.1's file name";
  }
  return "none";
}

std::string_view to_string(EnvKind k) {
  switch (k) {
    case EnvKind::system:
      return "system";
    case EnvKind::venv:
      return "venv";
    case EnvKind::venv_system_site:
      return "venv with system site packages";
    case EnvKind::conda:
      return "conda";
    case EnvKind::pyenv:
      return "pyenv";
    case EnvKind::given:
      return "given";
    case EnvKind::other:
      return "other";
  }
  return "other";
}

std::string_view to_string(PackageManager p) {
  switch (p) {
    case PackageManager::unknown:
      return "";
    case PackageManager::apt:
      return "apt";
    case PackageManager::dnf:
      return "dnf";
    case PackageManager::yum:
      return "yum";
    case PackageManager::zypper:
      return "zypper";
    case PackageManager::pacman:
      return "pacman";
  }
  return "";
}

bool Machine::module_loaded(std::string_view name) const {
  for (const auto& m : snap.driver.modules)
    if (m.name == name) return m.loaded;
  return false;
}

bool Machine::has_tool(std::string_view name) const {
  for (const auto& t : snap.host.tools)
    if (t.name == name) return true;
  return false;
}

bool Machine::is_like(std::string_view id) const {
  return snap.host.os_id == id || has(snap.host.os_like, id);
}

const snapshot::EnvVar* Machine::nvidia_env(std::string_view name) const {
  for (const auto& v : snap.host.nvidia_env)
    if (v.name == name) return &v;
  return nullptr;
}

bool Machine::package_installed(std::string_view name) const {
  for (const auto& p : snap.host.packages)
    if (p.name == name) return true;
  return false;
}

bool Machine::packages_known() const {
  return !snap.host.packages_known.empty();
}

EnvKind Machine::env_kind(const snapshot::PythonEnv& e) const {
  if (e.kind == "conda" || e.conda_meta) return EnvKind::conda;
  if (e.kind == "system") return EnvKind::system;
  if (e.kind == "venv") return e.system_site_packages ? EnvKind::venv_system_site : EnvKind::venv;
  if (e.kind == "pyenv") return EnvKind::pyenv;
  if (e.kind == "given") return EnvKind::given;
  return EnvKind::other;
}

std::optional<util::Version> Machine::python_version(const snapshot::PythonEnv& e) const {
  return util::Version::parse(e.version);
}

Machine derive(const snapshot::Snapshot& s, const kb::KnowledgeBase& kb) {
  Machine m(s);
  m.driver = driver_of(s);
  for (const auto& g : s.gpus) {
    std::optional<GpuCc> c;
    if (g.nvml)
      if (auto cc = util::Version::parse(g.nvml->compute_capability)) c = GpuCc{*cc, g.nvml->name, "NVML", &g};
    // Then the driver API's answer for the device at the same address (a GPU newer than the
    // knowledge base is known this way), then the knowledge base's model for its PCI id.
    if (!c && !g.pci.address.empty())
      for (const auto& d : s.runtime.driver_api.devices)
        if (d.pci_bus_id == g.pci.address)
          if (auto cc = util::Version::parse(d.compute_capability)) c = GpuCc{*cc, d.name, "CUDA driver API", &g};
    if (!c && !g.pci.address.empty())
      if (const auto* model = kb.gpu_by_pci_id(g.pci.device_id))
        c = GpuCc{model->cc, model->name, fmt::format("PCI id 10de:{:04x}", g.pci.device_id), &g};
    if (!c) continue;
    if (std::find(m.ccs.begin(), m.ccs.end(), c->cc) == m.ccs.end()) m.ccs.push_back(c->cc);
    m.gpus.push_back(std::move(*c));
  }
  m.root = s.host.uid == 0;
  m.in_container = !s.host.container.kind.empty();
  m.container_kind = s.host.container.kind;
  m.wsl2 = s.host.wsl.kind == "wsl2";
  m.nvidia_loaded = m.module_loaded("nvidia") || !s.driver.kernel_module.version.empty();
  if (const auto* jit = m.nvidia_env("CUDA_DISABLE_PTX_JIT")) m.jit_disabled = jit->value == "1";
  // The distribution family from os-release ID (ID_LIKE names the parents of derivatives).
  std::vector<std::string> like = s.host.os_like;
  like.insert(like.begin(), s.host.os_id);
  const auto family = [&](std::initializer_list<const char*> ids) {
    for (const auto* x : ids)
      if (has(like, x)) return true;
    return false;
  };
  if (family({"debian", "ubuntu"})) {
    m.distro_family = "debian";
    m.package_manager = PackageManager::apt;
    m.initramfs = Initramfs::update_initramfs;
  } else if (family({"fedora", "rhel", "centos", "rocky", "almalinux", "ol", "amzn"})) {
    m.distro_family = "fedora";
    m.package_manager = PackageManager::dnf;
    m.initramfs = Initramfs::dracut;
  } else if (family({"suse", "opensuse", "opensuse-leap", "opensuse-tumbleweed", "sles"})) {
    m.distro_family = "suse";
    m.package_manager = PackageManager::zypper;
    m.initramfs = Initramfs::dracut;
  } else if (family({"arch", "manjaro", "endeavouros"})) {
    m.distro_family = "arch";
    m.package_manager = PackageManager::pacman;
    m.initramfs = Initramfs::mkinitcpio;
  }
  return m;
}

}  // namespace cudoctor::view
