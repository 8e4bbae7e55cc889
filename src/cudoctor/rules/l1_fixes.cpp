#include "cudoctor/rules/l1_fixes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::l1 {
namespace {

using fixes::as_root;

bool ubuntu(const view::Machine& m) {
  return m.snap.host.os_id == "ubuntu" || m.is_like("ubuntu");
}

void add(std::vector<std::string>& v, std::string s) {
  if (!s.empty()) v.push_back(std::move(s));
}

// `producer | tee file` as root. sudo reads its password from the terminal; su reads it from
// standard input, which the pipe holds, so through su the whole line runs as root.
std::string write_as_root(const view::Machine& m, const std::string& producer, const std::string& file) {
  if (m.root || m.has_tool("sudo")) return producer + " | " + as_root(m, "tee " + file);
  return as_root(m, producer + " > " + file);
}

// The packages of the driver's user space, libcuda.so.1 among them.
fixes::Packages library_packages(std::optional<int> branch) {
  fixes::Packages p;
  p.debian = {"libcuda1"};
  if (branch) p.ubuntu = {fmt::format("libnvidia-compute-{}", *branch)};
  p.fedora = {"xorg-x11-drv-nvidia-cuda-libs"};
  p.suse = {"nvidia-compute-G06"};
  p.arch = {"nvidia-utils"};
  return p;
}

// The commands that install the NVIDIA driver, kernel module and user space; empty where no
// package is known. A legacy branch is pinned where the distribution packages it by name.
std::vector<std::string> install_driver(const view::Machine& m, std::optional<int> branch, bool legacy) {
  if (ubuntu(m) && !legacy) {
    // ubuntu-drivers picks the branch this GPU needs and the signed module for the kernel.
    if (m.has_tool("ubuntu-drivers")) return {as_root(m, "ubuntu-drivers install")};
    if (!branch) {
      fixes::Packages tool;
      tool.ubuntu = {"ubuntu-drivers-common"};
      return {fixes::install_packages(m, tool), as_root(m, "ubuntu-drivers install")};
    }
  }
  fixes::Packages p;
  if (branch) p.ubuntu = {fmt::format("nvidia-driver-{}", *branch)};
  if (legacy && branch == 470) {
    p.debian = {"nvidia-tesla-470-driver"};
    p.fedora = {"akmod-nvidia-470xx"};
    p.suse = {"x11-video-nvidiaG05"};
  } else {
    p.debian = {"nvidia-driver"};
    p.fedora = {"akmod-nvidia"};
    p.suse = {"nvidia-video-G06"};
    if (!legacy) p.arch = {"nvidia"};  // Arch has the legacy branches in the AUR only
  }
  std::vector<std::string> out;
  add(out, fixes::install_packages(m, p));
  return out;
}

// Where the driver packages come from, where that needs a step the commands do not take.
std::string driver_source_note(const view::Machine& m, bool legacy, std::optional<int> branch) {
  std::string s;
  if (m.distro_family == "fedora")
    s = " akmod-nvidia comes from RPM Fusion, which must be enabled first (rpmfusion.org/Configuration).";
  else if (m.distro_family == "debian" && !ubuntu(m))
    s = " Debian has the driver in its non-free component, which must be enabled in the apt sources.";
  else if (m.distro_family == "arch" && legacy && branch)
    s = fmt::format(" Arch has the R{} branch only in the AUR (nvidia-{}xx-dkms).", *branch, *branch);
  else if (m.distro_family.empty())
    s = " Install it from the distribution's packages or NVIDIA's installer (nvidia.com/drivers).";
  if (legacy && branch)
    s += fmt::format(" R{} is the last branch for this GPU: a newer driver package does not drive it.", *branch);
  return s;
}

// Whether a DKMS build of the driver is installed, so that rebuilding it is the fix.
bool dkms_driver(const view::Machine& m) {
  if (!m.has_tool("dkms")) return false;
  for (const auto& p : m.snap.host.packages)
    if (p.name.find("nvidia") != std::string::npos && p.name.find("dkms") != std::string::npos) return true;
  return false;
}

std::optional<int> legacy_of_gpus(const view::Machine& m, const kb::KnowledgeBase& kb) {
  std::optional<int> out;
  for (const auto& g : m.gpus)
    if (const auto* a = kb.architecture_of(g.cc); a && a->last_driver_branch)
      if (!out || *a->last_driver_branch < *out) out = a->last_driver_branch;
  return out;
}

}  // namespace

std::optional<int> driver_branch(const view::Machine& m, const kb::KnowledgeBase& kb) {
  if (m.driver.version) return m.driver.version->major();
  return legacy_of_gpus(m, kb);
}

bool legacy_branch(const view::Machine& m, const kb::KnowledgeBase& kb) {
  return !m.driver.version && legacy_of_gpus(m, kb).has_value();
}

std::string dmesg_check(const view::Machine& m, const std::string& pattern) {
  return as_root(m, "dmesg") + " | grep -i " + pattern;
}

std::vector<std::string> nvml_checks(const view::Machine& m, const std::string& nvidia_smi_args,
                                     const std::string& dmesg_pattern) {
  std::vector<std::string> out;
  if (m.has_tool("nvidia-smi") && !nvidia_smi_args.empty()) out.push_back("nvidia-smi " + nvidia_smi_args);
  if (!dmesg_pattern.empty()) out.push_back(dmesg_check(m, dmesg_pattern));
  return out;
}

Fix nouveau_fix(const view::Machine& m, const kb::KnowledgeBase& kb) {
  if (m.in_container)
    return {
        "On the host: blacklist nouveau (/etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs, install "
        "the NVIDIA driver and reboot; then start this container again."};
  const bool legacy = legacy_branch(m, kb);
  const auto branch = driver_branch(m, kb);
  Fix f;
  f.text = "Blacklist nouveau, rebuild the initramfs, install the NVIDIA driver and reboot." +
           driver_source_note(m, legacy, branch);
  f.commands.push_back(write_as_root(m, "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n'",
                                     "/etc/modprobe.d/blacklist-nouveau.conf"));
  add(f.commands, fixes::rebuild_initramfs(m));
  for (auto& c : install_driver(m, branch, legacy)) f.commands.push_back(std::move(c));
  f.commands.push_back(as_root(m, "reboot"));
  return f;
}

Fix vfio_fix(const view::Machine& m) {
  if (m.in_container)
    return {
        "On the host: remove the GPU's id from the vfio-pci.ids= kernel parameter or the vfio modprobe options "
        "and reboot."};
  return {"Remove the GPU's id from the vfio-pci.ids= kernel parameter or the vfio modprobe options and reboot.",
          {},
          {"grep -r vfio /etc/modprobe.d /proc/cmdline"}};
}

Fix unbound_fix(const view::Machine& m) {
  return {"Read the NVRM lines of the kernel log; install a driver branch that supports this GPU.",
          {},
          {dmesg_check(m, "-e NVRM -e nvidia")}};
}

Fix driver_too_old_fix(const view::Machine& m, const util::Version& need) {
  if (m.in_container)
    return {fmt::format("On the host: install driver {} or newer, then start this container again.", need.str())};
  Fix f;
  f.text = fmt::format("Install driver {} or newer.", need.str()) + driver_source_note(m, false, need.major());
  f.commands = install_driver(m, need.major(), false);
  if (!f.commands.empty()) f.commands.push_back(as_root(m, "reboot"));
  if (m.has_tool("ubuntu-drivers")) f.checks.emplace_back("ubuntu-drivers list");
  add(f.checks, fixes::plan_command(m));
  return f;
}

Fix driver_too_new_fix(const view::Machine& m, int last_branch) {
  const auto text = fmt::format("Install the R{} legacy driver (CUDA up to what that branch supports).", last_branch);
  if (m.in_container) return {"On the host: " + text + " Then start this container again."};
  Fix f;
  f.text = text + driver_source_note(m, true, last_branch);
  f.commands = install_driver(m, last_branch, true);
  if (!f.commands.empty()) f.commands.push_back(as_root(m, "reboot"));
  return f;
}

Fix module_on_host_fix() {
  return {
      "On the host: install and load the NVIDIA driver (nvidia-smi there shows it working), then start this "
      "container again."};
}

Fix blacklist_fix(const view::Machine& m, const std::vector<const snapshot::Blacklist*>& blocks) {
  Fix f;
  f.text = "Remove the blacklist entries, then rebuild the initramfs and reboot.";
  for (const auto* b : blocks) {
    if (b->source == "/proc/cmdline") {
      f.text += fmt::format(
          " Remove {} from the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub) and "
          "regenerate the boot loader's configuration (update-grub, or grub2-mkconfig -o "
          "/boot/grub2/grub.cfg).",
          b->line);
      continue;
    }
    // "/etc/modprobe.d/blacklist-nvidia.conf:4": comment that line out where it is.
    const auto colon = b->source.rfind(':');
    const auto line =
        colon == std::string::npos ? std::optional<std::uint64_t>() : util::parse_uint(b->source.substr(colon + 1));
    if (!line) {
      f.text += fmt::format(" Delete \"{}\" from {}.", b->line, b->source);
      continue;
    }
    f.commands.push_back(
        as_root(m, fmt::format("sed -i '{}s/^/# /' {}", *line, shell_quote(b->source.substr(0, colon)))));
  }
  add(f.commands, fixes::rebuild_initramfs(m));
  f.commands.push_back(as_root(m, "reboot"));
  return f;
}

Fix secure_boot_fix(const view::Machine& m) {
  Fix f;
  f.text =
      "Enroll the DKMS signing key and reboot (mokutil asks for a one-time password; confirm the enrolment with it "
      "in the blue MOK screen), or turn off Secure Boot.";
  if (!m.has_tool("mokutil")) {
    fixes::Packages p;
    p.debian = p.ubuntu = p.fedora = p.suse = p.arch = {"mokutil"};
    add(f.commands, fixes::install_packages(m, p));
  }
  // Where each distribution's DKMS (or akmods) keeps the key it signs modules with.
  const char* key = ubuntu(m)                     ? "/var/lib/shim-signed/mok/MOK.der"
                    : m.distro_family == "fedora" ? "/etc/pki/akmods/certs/public_key.der"
                                                  : "/var/lib/dkms/mok.pub";
  f.commands.push_back(as_root(m, fmt::format("mokutil --import {}", key)));
  f.commands.push_back(as_root(m, "reboot"));
  f.checks.push_back(dmesg_check(m, "-e 'module verification' -e 'key was rejected' -e lockdown"));
  return f;
}

Fix module_not_loaded_fix(const view::Machine& m, const kb::KnowledgeBase& kb, bool module_installed) {
  Fix f;
  if (module_installed) {
    f.text = "Load it and read the kernel log.";
    f.commands.push_back(as_root(m, "modprobe nvidia"));
    f.checks.push_back(dmesg_check(m, "-e NVRM -e nvidia"));
    return f;
  }
  const bool legacy = legacy_branch(m, kb);
  const auto branch = driver_branch(m, kb);
  if (dkms_driver(m)) {
    f.text = "Rebuild the DKMS driver for this kernel, then load it.";
    f.commands.push_back(as_root(m, "dkms autoinstall"));
  } else {
    f.text = "Install the driver for this kernel, then load it." + driver_source_note(m, legacy, branch);
    f.commands = install_driver(m, branch, legacy);
  }
  f.commands.push_back(as_root(m, "modprobe nvidia"));
  return f;
}

Fix uvm_fix(const view::Machine& m, bool module_loaded, bool node_present) {
  if (m.in_container && module_loaded)
    return {
        "The host has nvidia-uvm loaded; the runtime passes /dev/nvidia-uvm in to a container that asks for the "
        "compute capability. Start this container again with it (on the host, nvidia-modprobe -u -c=0 first "
        "where the host lacks the node)."};
  if (m.in_container)
    return {
        "On the host: load nvidia-uvm and create /dev/nvidia-uvm (modprobe nvidia-uvm, then nvidia-modprobe -u "
        "-c=0), then start this container again so that the runtime passes the node in."};
  Fix f;
  f.text = "Load nvidia-uvm and create its device node.";
  if (!module_loaded) f.commands.push_back(as_root(m, "modprobe nvidia-uvm"));
  if (!node_present) {
    // nvidia-uvm's major is dynamic: /proc/devices names it once the module is loaded.
    f.commands.push_back(
        m.has_tool("nvidia-modprobe")
            ? as_root(m, "nvidia-modprobe -u -c=0")
            : as_root(m, "mknod -m 666 /dev/nvidia-uvm c $(grep nvidia-uvm /proc/devices | cut -d' ' -f1) 0"));
  }
  return f;
}

Fix nodes_fix(const view::Machine& m, bool ctl_missing, const std::vector<unsigned>& missing_minors) {
  if (m.in_container)
    return {
        "The runtime passes in the nodes of the GPUs the container was started with (--gpus, "
        "NVIDIA_VISIBLE_DEVICES): on the host, start this container again with the GPUs it needs."};
  Fix f;
  f.text = "Create the nodes (nvidia-persistenced, where it is installed and enabled, creates them at boot).";
  if (m.has_tool("nvidia-modprobe")) {
    std::string cmd = "nvidia-modprobe";
    for (const auto minor : missing_minors) cmd += fmt::format(" -c={}", minor);
    if (missing_minors.empty()) cmd += " -c=0";  // creates /dev/nvidiactl with it
    f.commands.push_back(as_root(m, cmd));
    return f;
  }
  // The driver's fixed major 195: minor 255 the control node, N the GPU of minor N; mode
  // 0666 as the driver's NVreg_DeviceFileMode default.
  if (ctl_missing) f.commands.push_back(as_root(m, "mknod -m 666 /dev/nvidiactl c 195 255"));
  for (const auto minor : missing_minors)
    f.commands.push_back(as_root(m, fmt::format("mknod -m 666 /dev/nvidia{} c 195 {}", minor, minor)));
  return f;
}

Fix nodes_not_permitted_fix(const view::Machine& m) {
  // Through su the command runs in root's shell, where $USER is root: name the user instead.
  const auto& user = m.snap.host.user;
  const auto who = m.root || m.has_tool("sudo") || user.empty() ? std::string("\"$USER\"") : shell_quote(user);
  return {
      "Add the user to the group that owns the nodes (then log in again), or fix the udev rule that sets their "
      "mode.",
      {as_root(m, "usermod -aG \"$(stat -c %G /dev/nvidiactl)\" " + who)},
      {"ls -l /dev/nvidia*"}};
}

Fix library_missing_fix(const view::Machine& m, const kb::KnowledgeBase& kb, const snapshot::DriverLibrary* lib,
                        std::string& title) {
  const snapshot::LibraryCandidate* cand = nullptr;
  if (lib)
    for (const char* state : {"dangling", "off_loader_path", "wrong_class", "unusable"})
      for (const auto& c : lib->candidates)
        if (!cand && c.state == state) cand = &c;
  if (cand) {
    if (cand->state == "dangling")
      title = fmt::format("libcuda.so.1 is installed but its link dangles: {} -> {}", cand->path, cand->target);
    else if (cand->state == "off_loader_path")
      title = fmt::format("libcuda.so.1 is installed at {} but not on the loader's path", cand->path);
    else
      title = fmt::format("libcuda.so.1 at {} is passed over by the loader: {}", cand->path, cand->reason);
  }
  const auto dir = cand ? cand->path.substr(0, cand->path.rfind('/')) : std::string();
  if (m.in_container) {
    if (!cand) title = "libcuda.so.1 is not mounted into the container";
    return {
        "Start the container with the toolkit's compute capability, so that it mounts the host's libcuda.so.1: on "
        "the host, docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility <image>."};
  }
  if (cand && cand->state == "off_loader_path")
    return {fmt::format("Add {} to the loader's path and rebuild its cache.", dir),
            {write_as_root(m, "echo " + shell_quote(dir), "/etc/ld.so.conf.d/nvidia.conf"), as_root(m, "ldconfig")}};
  if (m.wsl2)
    return {
        "From Windows: update the NVIDIA driver and run wsl --update; /usr/lib/wsl/lib must be on the loader's path.",
        {as_root(m, "ldconfig")},
        {"ls -l /usr/lib/wsl/lib/libcuda.so.1", "cat /etc/ld.so.conf.d/ld.wsl.conf"}};
  const auto kver = m.snap.driver.kernel_module.version;
  const auto install = fixes::install_packages(m, library_packages(driver_branch(m, kb)));
  if (cand) {
    Fix f{"Reinstall the package that owns it, then rebuild the loader's cache."};
    add(f.commands, install);
    f.commands.push_back(as_root(m, "ldconfig"));
    if (install.empty())
      f.text = "Reinstall the driver's user-space package that owns it, then rebuild the loader's cache.";
    return f;
  }
  Fix f{fmt::format("Install the user-space driver package of the same version{}.",
                    kver.empty() ? "" : " (" + kver + ")")};
  add(f.commands, install);
  return f;
}

Fix version_mismatch_fix(const view::Machine& m) {
  if (m.in_container)
    return {
        "On the host: reboot, or with nothing using the GPU reload the modules. If this image brings its own "
        "libcuda.so.1, remove it: the runtime mounts the host's."};
  return {"Reboot; or, with nothing using the GPU, reload the modules.",
          {as_root(m, "reboot"), as_root(m, "rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia") + " && " +
                                     as_root(m, "modprobe nvidia") + " && " + as_root(m, "modprobe nvidia_uvm")}};
}

Fix container_no_access_fix(const std::string& kind) {
  if (kind == "kubernetes")
    return {
        "Request the GPU in the pod spec (resources.limits nvidia.com/gpu) on a node running the NVIDIA device "
        "plugin or GPU operator; kubectl describe node lists nvidia.com/gpu where it runs."};
  if (kind == "podman")
    return {
        "Start the container with the GPU passed through CDI: on the host, sudo nvidia-ctk cdi generate "
        "--output=/etc/cdi/nvidia.yaml, then podman run --device nvidia.com/gpu=all <image>."};
  if (kind == "apptainer")
    return {
        "Start the container with --nv, which binds the host's driver and devices: apptainer exec --nv <image.sif>."};
  if (kind == "lxc")
    return {
        "On the host: pass the GPU into the container (lxc config device add <container> gpu gpu; lxc config set "
        "<container> nvidia.runtime true) and restart it."};
  return {
      "Start the container with the GPUs requested: on the host, docker run --gpus all <image>. The host needs the "
      "NVIDIA Container Toolkit (sudo nvidia-ctk runtime configure --runtime=docker, then sudo systemctl restart "
      "docker)."};
}

Fix capability_fix(const std::string& kind, const snapshot::EnvVar& var) {
  // Add compute (and utility, for nvidia-smi) to what was asked for.
  std::vector<std::string> caps = {"compute"};
  std::vector<std::string> given;
  for (const auto c : util::split(var.value, ',')) {
    const auto t = std::string(util::trim(c));
    if (!t.empty() && std::find(given.begin(), given.end(), t) == given.end()) given.push_back(t);
  }
  if (std::find(given.begin(), given.end(), "utility") == given.end()) caps.emplace_back("utility");
  caps.insert(caps.end(), given.begin(), given.end());
  const auto value = fmt::format("{}", fmt::join(caps, ","));
  std::string how;
  if (kind == "kubernetes")
    how = fmt::format("set NVIDIA_DRIVER_CAPABILITIES={} in the container's env of the pod spec and recreate the pod",
                      value);
  else if (kind == "podman")
    how = fmt::format("on the host, podman run --device nvidia.com/gpu=all -e NVIDIA_DRIVER_CAPABILITIES={} <image>",
                      value);
  else if (kind == "docker" || kind.empty())
    how = fmt::format("on the host, docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES={} <image>", value);
  else
    how = fmt::format("start it with NVIDIA_DRIVER_CAPABILITIES={}", value);
  Fix f{
      fmt::format("Start the container again with the compute capability: {}. An image that sets the variable "
                  "(ENV in its Dockerfile) is overridden by -e.",
                  how)};
  f.checks.push_back(var.source == "/proc/1/environ"
                         ? "tr '\\0' '\\n' < /proc/1/environ | grep NVIDIA_DRIVER_CAPABILITIES"
                         : "printenv NVIDIA_DRIVER_CAPABILITIES");
  return f;
}

}  // namespace cudoctor::rules::l1
