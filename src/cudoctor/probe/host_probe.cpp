#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

using util::trim;

// os-release(5): KEY=value lines, values optionally quoted.
void read_os_release(Context& ctx, snapshot::HostFacts& host) {
  auto text = ctx.read_optional("/etc/os-release");
  if (!text) text = ctx.read_optional("/usr/lib/os-release");
  if (!text) return;
  for (const auto line : util::lines(*text)) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || line.starts_with("#")) continue;
    const auto key = trim(line.substr(0, eq));
    auto value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    if (key == "ID") host.os_id = value;
    if (key == "VERSION_ID") host.os_version = value;
    if (key == "PRETTY_NAME") host.os_pretty_name = value;
    if (key == "ID_LIKE")  // "space-separated list of operating system identifiers" (os-release(5))
      for (const auto id : util::split_ws(value)) host.os_like.emplace_back(id);
  }
}

std::string first_line(Context& ctx, const std::string& path) {
  const auto text = ctx.read_optional(path, 64 * 1024);
  if (!text) return "";
  const auto ls = util::lines(*text);
  return ls.empty() ? "" : std::string(trim(ls.front()));
}

void detect_container(Context& ctx, snapshot::HostFacts& host) {
  const auto& sys = ctx.sys();
  std::vector<std::pair<std::string, std::string>> signs;  // (kind, evidence)
  if (sys.env("KUBERNETES_SERVICE_HOST")) signs.emplace_back("kubernetes", "KUBERNETES_SERVICE_HOST is set");
  if (sys.exists("/var/run/secrets/kubernetes.io/serviceaccount"))
    signs.emplace_back("kubernetes", "/var/run/secrets/kubernetes.io/serviceaccount exists");
  for (const char* var : {"APPTAINER_CONTAINER", "SINGULARITY_CONTAINER"})
    if (sys.env(var)) signs.emplace_back("apptainer", fmt::format("{} is set", var));
  if (sys.exists("/.singularity.d")) signs.emplace_back("apptainer", "/.singularity.d exists");
  if (sys.exists("/run/.containerenv")) signs.emplace_back("podman", "/run/.containerenv exists");
  if (sys.exists("/.dockerenv")) signs.emplace_back("docker", "/.dockerenv exists");
  if (const auto kind = first_line(ctx, "/run/systemd/container"); !kind.empty())
    signs.emplace_back(kind == "oci" ? "docker" : kind, fmt::format("/run/systemd/container says \"{}\"", kind));
  if (const auto cg = ctx.read_optional("/proc/1/cgroup", 256 * 1024)) {
    for (const auto line : util::lines(*cg)) {
      const std::pair<const char*, const char*> markers[] = {
          {"/kubepods", "kubernetes"}, {"/docker/", "docker"}, {"docker-", "docker"},
          {"libpod", "podman"},        {"/lxc/", "lxc"},       {"/lxc.payload", "lxc"}};
      for (const auto& [marker, kind] : markers)
        if (line.find(marker) != std::string_view::npos) {
          signs.emplace_back(kind, fmt::format("/proc/1/cgroup: {}", util::printable(line, 120)));
          break;
        }
    }
  }
  // The orchestrator names the situation better than the engine under it.
  for (const char* kind : {"kubernetes", "apptainer", "podman", "docker", "lxc", "systemd-nspawn"}) {
    for (const auto& [k, _] : signs)
      if (k == kind) {
        host.container.kind = kind;
        break;
      }
    if (!host.container.kind.empty()) break;
  }
  if (host.container.kind.empty() && !signs.empty()) host.container.kind = signs.front().first;
  for (const auto& [_, evidence] : signs) host.container.evidence.push_back(evidence);
}

void detect_wsl(Context& ctx, snapshot::HostFacts& host) {
  // Microsoft's WSL kernels name themselves in the release: WSL2 "…-microsoft-standard-WSL2",
  // WSL1 "…-Microsoft" (the Windows kernel emulating Linux).
  const auto& sys = ctx.sys();
  if (util::contains_icase(host.kernel, "microsoft")) {
    host.wsl.evidence.push_back(fmt::format("kernel release \"{}\"", host.kernel));
    host.wsl.kind = host.kernel.find("microsoft") != std::string::npos ? "wsl2" : "wsl1";
  }
  if (sys.exists("/dev/dxg")) {
    host.wsl.evidence.push_back("/dev/dxg exists (the GPU paravirtualisation device)");
    host.wsl.kind = "wsl2";
  }
  if (const auto d = sys.env("WSL_DISTRO_NAME")) {
    host.wsl.evidence.push_back(fmt::format("WSL_DISTRO_NAME={}", *d));
    if (host.wsl.kind.empty()) host.wsl.kind = "wsl2";
  }
}

void detect_hypervisor(Context& ctx, snapshot::HostFacts& host) {
  bool flag = false;
  if (const auto cpuinfo = ctx.read_optional("/proc/cpuinfo", 8 << 20)) {
    for (const auto line : util::lines(*cpuinfo)) {
      if (!line.starts_with("flags")) continue;
      for (const auto f : util::split_ws(line))
        if (f == "hypervisor") flag = true;
      break;  // every CPU lists the same flags
    }
  }
  if (flag) host.hypervisor.evidence.push_back("/proc/cpuinfo has the \"hypervisor\" flag");
  const auto vendor = first_line(ctx, "/sys/class/dmi/id/sys_vendor");
  const auto product = first_line(ctx, "/sys/class/dmi/id/product_name");
  const auto xen = first_line(ctx, "/sys/hypervisor/type");
  struct Known {
    const char* marker;
    const char* kind;
  };
  const Known known[] = {{"QEMU", "kvm"},
                         {"KVM", "kvm"},
                         {"VMware", "vmware"},
                         {"VirtualBox", "virtualbox"},
                         {"innotek", "virtualbox"},
                         {"Microsoft Corporation", "hyperv"},
                         {"Xen", "xen"},
                         {"Amazon EC2", "kvm"},
                         {"Google", "kvm"},
                         {"OpenStack", "kvm"},
                         {"Parallels", "parallels"}};
  for (const auto& k : known) {
    if (vendor.find(k.marker) != std::string::npos || product.find(k.marker) != std::string::npos) {
      host.hypervisor.kind = k.kind;
      host.hypervisor.evidence.push_back(
          fmt::format("DMI: vendor \"{}\", product \"{}\"", util::printable(vendor), util::printable(product)));
      break;
    }
  }
  if (!xen.empty()) {
    host.hypervisor.kind = "xen";
    host.hypervisor.evidence.push_back(fmt::format("/sys/hypervisor/type says \"{}\"", xen));
  }
  if (host.hypervisor.kind.empty() && flag) host.hypervisor.kind = "unknown";
  // WSL2 runs in a Hyper-V VM; that is said by the WSL facts.
}

void detect_secure_boot(Context& ctx, snapshot::HostFacts& host) {
  const auto& sys = ctx.sys();
  if (!sys.exists("/sys/firmware/efi")) {
    host.secure_boot_evidence = "no /sys/firmware/efi: booted without UEFI, so no Secure Boot";
    if (sys.exists("/sys/firmware")) host.secure_boot = false;
    return;
  }
  // efivarfs: 4 bytes of attributes, then the variable; SecureBoot is one byte, 1 = enabled
  // (UEFI spec, "Globally Defined Variables", EFI_GLOBAL_VARIABLE GUID).
  const std::string path = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
  const auto data = ctx.read_optional(path, 64);
  if (!data) {
    host.secure_boot_evidence = "UEFI boot, SecureBoot variable not readable";
    return;
  }
  if (data->size() != 5) {
    ctx.unreadable(path, fmt::format("expected 5 bytes (attributes + value), found {}", data->size()));
    return;
  }
  host.secure_boot = (*data)[4] == 1;
  host.secure_boot_evidence =
      fmt::format("{}: value {}", path, static_cast<int>(static_cast<unsigned char>((*data)[4])));
}

void add_unique(std::vector<std::string>& v, std::string s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
}

// Directories that are homes of system accounts (passwd(5) on Debian and Fedora) or hold
// the whole system: redacting them would blank out the report.
bool system_directory(const std::string& home) {
  static const char* const k_system[] = {
      "/",          "/nonexistent", "/dev/null", "/bin", "/sbin", "/usr", "/usr/bin", "/usr/sbin", "/usr/lib",
      "/usr/local", "/lib",         "/lib64",    "/etc", "/var",  "/tmp", "/var/tmp", "/opt",      "/home",
      "/srv",       "/run",         "/proc",     "/sys", "/dev",  "/mnt", "/media",   "/boot"};
  if (home.empty() || home.front() != '/') return true;
  auto h = home;
  while (h.size() > 1 && h.back() == '/') h.pop_back();
  return std::find(std::begin(k_system), std::end(k_system), h) != std::end(k_system);
}

// The names, homes and host names --redact replaces. Homes come from the passwd file of the
// root inspected: every account with uid ≥ 1000 (login.defs UID_MIN) but nobody (65534).
void gather_private(Context& ctx, snapshot::HostFacts& host) {
  const auto& sys = ctx.sys();
  std::vector<std::string> names;
  add_unique(names, host.user);
  for (const char* var : {"USER", "LOGNAME", "SUDO_USER"}) add_unique(names, sys.env(var).value_or(""));
  for (auto& n : names)
    if (n != "root") add_unique(host.private_names, n);
  const auto add_home = [&](const std::string& h) {
    if (!system_directory(h)) add_unique(host.private_homes, h);
  };
  add_home(sys.env("HOME").value_or(""));
  if (const auto passwd = ctx.read_optional("/etc/passwd", 16 << 20)) {
    for (const auto line : util::lines(*passwd)) {
      // name:password:uid:gid:gecos:home:shell
      const auto f = util::split(line, ':');
      if (f.size() < 7) continue;
      const auto uid = util::parse_uint(f[2]);
      const bool named = std::find(names.begin(), names.end(), std::string(f[0])) != names.end();
      if ((uid && *uid >= 1000 && *uid != 65534) || (uid && *uid == host.uid) || named) add_home(std::string(f[5]));
    }
  }
  const auto h = util::trim(host.hostname);
  if (h.empty() || h == "localhost") return;
  add_unique(host.host_names, std::string(h));
  const auto short_name = std::string(h.substr(0, h.find('.')));
  add_unique(host.host_names, short_name);
  // hosts(5): address, canonical name, aliases; the names that start with "<short>." are FQDNs.
  if (const auto hosts = ctx.read_optional("/etc/hosts", 4 << 20))
    for (const auto line : util::lines(*hosts)) {
      const auto fields = util::split_ws(line.substr(0, line.find('#')));
      const bool ours = std::find(fields.begin(), fields.end(), short_name) != fields.end() ||
                        std::find(fields.begin(), fields.end(), h) != fields.end();
      if (!ours) continue;
      for (std::size_t i = 1; i < fields.size(); ++i)
        if (fields[i].starts_with(short_name + ".")) add_unique(host.host_names, std::string(fields[i]));
    }
}

// The variables the NVIDIA Container Toolkit reads from an image or a run (NVIDIA_*) and the
// CUDA driver reads at start-up (CUDA_*), in the order they are reported.
constexpr const char* k_nvidia_env[] = {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA",
                                        "NVIDIA_DISABLE_REQUIRE", "CUDA_DISABLE_PTX_JIT",       "CUDA_FORCE_PTX_JIT",
                                        "CUDA_MODULE_LOADING"};

// Our own environment first. In a container the runtime sets NVIDIA_* on the container's
// first process, and a shell entered with `docker exec` need not inherit them: those left
// unset are taken from /proc/1/environ (NAME=value entries, NUL-separated; proc(5)). Under
// --root that is the tree's /proc/1/environ. It is read only when readable (another user's
// first process is not): a variable missing from both is reported as unset.
void read_nvidia_env(Context& ctx, snapshot::HostFacts& host) {
  const auto& sys = ctx.sys();
  std::optional<std::string> pid1;
  bool pid1_read = false;
  for (const char* name : k_nvidia_env) {
    if (const auto v = sys.env(name)) {
      host.nvidia_env.push_back({name, *v, "environment"});
      continue;
    }
    if (host.container.kind.empty()) continue;
    if (!pid1_read) {
      pid1_read = true;
      pid1 = ctx.read_quiet("/proc/1/environ", 1 << 20);
    }
    if (!pid1) continue;
    const auto prefix = std::string(name) + "=";
    for (const auto entry : util::split(*pid1, '\0'))
      if (entry.starts_with(prefix)) {
        host.nvidia_env.push_back({name, std::string(entry.substr(prefix.size())), "/proc/1/environ"});
        break;
      }
  }
  // Every other NVIDIA_REQUIRE_* the image sets: the toolkit checks them all.
  if (!pid1) return;
  for (const auto entry : util::split(*pid1, '\0')) {
    const auto eq = entry.find('=');
    if (!entry.starts_with("NVIDIA_REQUIRE_") || eq == std::string_view::npos) continue;
    const auto name = std::string(entry.substr(0, eq));
    const bool have = std::any_of(host.nvidia_env.begin(), host.nvidia_env.end(),
                                  [&](const snapshot::EnvVar& e) { return e.name == name; });
    if (!have) host.nvidia_env.push_back({name, std::string(entry.substr(eq + 1)), "/proc/1/environ"});
  }
}

}  // namespace

snapshot::HostFacts probe_host(Context& ctx) {
  snapshot::HostFacts host;
  read_os_release(ctx, host);
  host.kernel = first_line(ctx, "/proc/sys/kernel/osrelease");
  host.arch = first_line(ctx, "/proc/sys/kernel/arch");
  host.hostname = first_line(ctx, "/proc/sys/kernel/hostname");
  if (host.hostname.empty()) host.hostname = first_line(ctx, "/etc/hostname");
  const auto id = ctx.sys().identity();
  host.uid = id.uid;
  host.user = id.user_name;
  host.gids.push_back(id.gid);
  for (const auto g : id.groups)
    if (g != id.gid) host.gids.push_back(g);
  detect_container(ctx, host);
  read_nvidia_env(ctx, host);
  detect_wsl(ctx, host);
  detect_hypervisor(ctx, host);
  detect_secure_boot(ctx, host);
  gather_private(ctx, host);
  return host;
}

}  // namespace cudoctor::probe
