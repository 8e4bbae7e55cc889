// L1: the nvidia kernel module, loaded or not, and why not: a container's host, a blacklist,
// Secure Boot, or a module that is not installed for the running kernel.
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::l1 {
namespace {

using fixes::as_root;

// Whether a DKMS build of the driver is installed, so that rebuilding it is the fix.
bool dkms_driver(const view::Machine& m) {
  if (!m.has_tool("dkms")) return false;
  for (const auto& p : m.snap.host.packages)
    if (p.name.find("nvidia") != std::string::npos && p.name.find("dkms") != std::string::npos) return true;
  return false;
}

// The host has no nvidia module loaded and cudoctor runs in a container.
Fix module_on_host_fix() {
  return {
      "On the host: install and load the NVIDIA driver (nvidia-smi there shows it working), then start this "
      "container again."};
}

// modprobe.d lines or kernel parameters that blacklist nvidia.
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
  push_nonempty(f.commands, fixes::rebuild_initramfs(m));
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
    push_nonempty(f.commands, fixes::install_packages(m, p));
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

// The module is not loaded; module_installed: an nvidia.ko exists for the running kernel.
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

}  // namespace

// The module is not loaded although a GPU is there: why, as precisely as the facts allow.
void module_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto& h = v.snap.host;
  if (v.nvidia_loaded) {
    auto f = make_finding("nvidia-module-loaded");
    const auto& km = drv.kernel_module;
    f.title = km.version.empty() ? std::string("nvidia kernel module loaded")
                                 : fmt::format("nvidia kernel module {} loaded{}", km.version,
                                               km.flavor == "open" ? " (open kernel module)" : "");
    if (!km.version_line.empty()) f.evidence.push_back(km.version_source + ": " + km.version_line);
    f.evidence.push_back(modules_evidence(v));
    out.push_back(std::move(f));
    return;
  }
  // Nothing of nouveau either way: nouveau-bound already said it.
  for (const auto* g : v.pci_gpus)
    if (g->pci.driver == "nouveau") return;

  std::vector<const snapshot::Blacklist*> blocks;
  for (const auto& b : drv.blacklists)
    if (b.module == "nvidia") blocks.push_back(&b);
  Finding f;
  if (v.in_container) {
    f = make_finding("nvidia-module-not-loaded");
    f.detail = fmt::format(
        "Containers use the host's kernel; the host has no NVIDIA module loaded, so the GPU "
        "cannot be used from this {} container or from the host.",
        h.container.kind);
    f.fix = module_on_host_fix();
  } else if (!blocks.empty()) {
    f = make_finding("nvidia-module-blacklisted");
    for (const auto* b : blocks) f.evidence.push_back(fmt::format("{}: {}", b->source, b->line));
    f.detail =
        "A modprobe configuration or kernel parameter keeps the module from loading (often left over from a "
        "switch to integrated graphics).";
    f.fix = blacklist_fix(v.m, blocks);
  } else if (h.secure_boot.value_or(false)) {
    f = make_finding("module-blocked-by-secure-boot");
    f.detail =
        "With Secure Boot on, the kernel refuses modules not signed by a key it trusts; a driver built by "
        "DKMS is signed with a machine-owner key (MOK) that must be enrolled first.";
    f.fix = secure_boot_fix(v.m);
  } else {
    f = make_finding("nvidia-module-not-loaded");
    if (drv.module_files.empty()) {
      f.detail = fmt::format(
          "No nvidia.ko is installed for the running kernel {}: the driver is not installed, or it "
          "was built for another kernel (a kernel update without DKMS rebuilding it).",
          h.kernel);
      f.fix = module_not_loaded_fix(v.m, kb, false);
    } else {
      f.detail = "The module is installed for this kernel but not loaded; loading it by hand shows why it failed.";
      f.fix = module_not_loaded_fix(v.m, kb, true);
    }
    for (const auto& m : drv.module_files) f.evidence.push_back("installed: " + m);
  }
  if (blocks.empty())  // a blacklist in a source that could not be read is not known to be absent
    for (const auto& src : drv.blacklist_sources_unreadable)
      f.evidence.push_back(src + ": could not read its blacklists");
  f.evidence.push_back(modules_evidence(v));
  f.evidence.push_back("/proc/driver/nvidia/version: missing");
  if (h.secure_boot) f.evidence.push_back(h.secure_boot_evidence);
  out.push_back(std::move(f));
}

}  // namespace cudoctor::rules::l1
