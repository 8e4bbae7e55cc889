#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/rules.hpp"

namespace cudoctor::rules {
namespace {

// Sources that describe the driver layer; everything else unreadable belongs to the host.
bool is_driver_source(const std::string& path) {
  return path.starts_with("/sys/bus/pci") || path.starts_with("/proc/driver/nvidia") ||
         path.starts_with("/proc/modules") || path.starts_with("/sys/module") || path.starts_with("/dev/") ||
         path.starts_with("/etc/modprobe.d") || path.starts_with("/usr/share/misc/pci.ids") ||
         path.starts_with("/usr/share/hwdata");
}

}  // namespace

std::vector<Finding> host_rules(const view::Machine& m) {
  const auto& snap = m.snap;
  std::vector<Finding> out;
  const auto& h = snap.host;
  {
    auto f = make_finding("host-os");
    const auto os = h.os_pretty_name.empty() ? std::string("unknown distribution") : h.os_pretty_name;
    f.title = fmt::format("{}, kernel {}, {}", os, h.kernel.empty() ? "unknown" : h.kernel,
                          h.arch.empty() ? "unknown architecture" : h.arch);
    f.evidence.push_back(fmt::format("/etc/os-release: ID={} VERSION_ID={}", h.os_id, h.os_version));
    f.evidence.push_back(fmt::format("/proc/sys/kernel/osrelease: {}", h.kernel));
    if (h.secure_boot) f.evidence.push_back(fmt::format("Secure Boot {}", *h.secure_boot ? "enabled" : "disabled"));
    if (!h.secure_boot_evidence.empty()) f.evidence.push_back(h.secure_boot_evidence);
    out.push_back(std::move(f));
  }
  if (!h.container.kind.empty()) {
    auto f = make_finding("in-container");
    f.title = fmt::format("Running inside a {} container", h.container.kind);
    f.detail =
        "The GPU, its device nodes and the user-space driver reach a container only when its runtime passes "
        "them in; the kernel module is always the host's.";
    f.evidence = h.container.evidence;
    out.push_back(std::move(f));
  }
  if (!h.hypervisor.kind.empty() && h.wsl.kind.empty()) {
    auto f = make_finding("in-virtual-machine");
    f.title = h.hypervisor.kind == "unknown" ? std::string("Running in a virtual machine")
                                             : fmt::format("Running in a virtual machine ({})", h.hypervisor.kind);
    f.detail =
        "A GPU appears inside a VM only when the hypervisor passes it through (PCI passthrough, vGPU) or "
        "the cloud instance type includes one.";
    f.evidence = h.hypervisor.evidence;
    out.push_back(std::move(f));
  }
  if (h.wsl.kind == "wsl2") {
    auto f = make_finding("wsl2");
    f.detail =
        "Under WSL2 the Windows NVIDIA driver provides the GPU through /dev/dxg and the libraries in "
        "/usr/lib/wsl/lib; no Linux kernel module is used. Never install a Linux NVIDIA driver inside WSL.";
    f.evidence = h.wsl.evidence;
    out.push_back(std::move(f));
  } else if (h.wsl.kind == "wsl1") {
    auto f = make_finding("wsl1-no-gpu");
    f.detail = "GPU compute is available only in WSL2 distributions.";
    f.evidence = h.wsl.evidence;
    // wsl.exe runs on the Windows side, not in this shell: named in the text, not as a command.
    f.fix = {
        "Convert the distribution to WSL2 from a Windows prompt (wsl --set-version DISTRIBUTION 2, the name as "
        "wsl --list shows it), then reopen it.",
        {}};
    out.push_back(std::move(f));
  }
  for (const auto& u : snap.unreadable) {
    auto f =
        make_finding(is_driver_source(u.path) ? FindingId("driver-fact-unreadable") : FindingId("fact-unreadable"));
    f.title = fmt::format("Could not read {}", u.path);
    f.detail = "Conclusions that depend on this source are left out or marked unknown.";
    f.evidence.push_back(fmt::format("{}: {}", u.path, u.reason));
    if (u.reason.find("ermission") != std::string::npos)
      f.fix = {"Run cudoctor as a user who may read it, or check the file's permissions.",
               {},
               {"ls -l " + fixes::shell_quote(u.path)}};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace cudoctor::rules
