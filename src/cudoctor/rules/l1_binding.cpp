// L1: the GPUs on the PCI bus and the driver bound to each: none at all, nouveau, vfio-pci,
// a driver too old or too new for the GPU's architecture, or nothing bound.
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {
namespace {

using fixes::as_root;

// nouveau holds a GPU: blacklist it, rebuild the initramfs, install the driver, reboot.
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
  push_nonempty(f.commands, fixes::rebuild_initramfs(m));
  for (auto& c : install_driver(m, branch, legacy)) f.commands.push_back(std::move(c));
  f.commands.push_back(as_root(m, "reboot"));
  return f;
}

// The GPU is bound to vfio-pci or pci-stub.
Fix vfio_fix(const view::Machine& m) {
  if (m.in_container)
    return {
        "On the host: remove the GPU's id from the vfio-pci.ids= kernel parameter or the vfio modprobe options "
        "and reboot."};
  return {"Remove the GPU's id from the vfio-pci.ids= kernel parameter or the vfio modprobe options and reboot.",
          {},
          {"grep -r vfio /etc/modprobe.d /proc/cmdline"}};
}

// The module is loaded and left a GPU unbound.
Fix unbound_fix(const view::Machine& m) {
  return {"Read the NVRM lines of the kernel log; install a driver branch that supports this GPU.",
          {},
          {dmesg_check(m, "-e NVRM -e nvidia")}};
}

// The driver is older than a GPU: a driver of branch need or newer.
Fix driver_too_old_fix(const view::Machine& m, const util::Version& need) {
  if (m.in_container)
    return {fmt::format("On the host: install driver {} or newer, then start this container again.", need.str())};
  Fix f;
  f.text = fmt::format("Install driver {} or newer.", need.str()) + driver_source_note(m, false, need.major());
  f.commands = install_driver(m, need.major(), false);
  if (!f.commands.empty()) f.commands.push_back(as_root(m, "reboot"));
  if (m.has_tool("ubuntu-drivers")) f.checks.emplace_back("ubuntu-drivers list");
  push_nonempty(f.checks, fixes::plan_command(m));
  return f;
}

// The driver dropped the GPU's architecture: the legacy branch's driver.
Fix driver_too_new_fix(const view::Machine& m, int last_branch) {
  const auto text = fmt::format("Install the R{} legacy driver (CUDA up to what that branch supports).", last_branch);
  if (m.in_container) return {"On the host: " + text + " Then start this container again."};
  Fix f;
  f.text = text + driver_source_note(m, true, last_branch);
  f.commands = install_driver(m, last_branch, true);
  if (!f.commands.empty()) f.commands.push_back(as_root(m, "reboot"));
  return f;
}

// The driver branch against the GPU's architecture, from the knowledge base: a GPU newer
// than the driver, or an old GPU whose last driver branch has passed, is never bound.
bool driver_vs_gpu_rule(const View& v, const snapshot::Gpu& g, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& driver = v.driver;
  const auto* model = kb.gpu_by_pci_id(g.pci.device_id);
  if (!driver || !model) return false;
  const auto mismatch = kb.driver_vs_cc(*driver, model->cc);
  if (!mismatch) return false;
  const auto* arch = kb.architecture_of(model->cc);
  const auto need = mismatch->need;
  const auto cc = fmt::format("compute capability {}", model->cc.str());
  if (mismatch->too_old) {
    auto f = make_finding("driver-too-old-for-gpu");
    f.title =
        fmt::format("Driver {} is older than GPU {} ({} needs ≥ {})", driver->str(), gpu_label(g), cc, need->str());
    f.detail = fmt::format(
        "{} GPUs arrived with CUDA {}; no driver before {} can drive them, so the module leaves the GPU "
        "unbound.",
        arch ? arch->name : "These", kb.arch_cc(model->cc)->first_cuda.str(), need->str());
    f.evidence = {pci_evidence(g.pci), v.snap.driver.kernel_module.version_line,
                  fmt::format("knowledge base: {} = {}, {}", model->name, arch ? arch->name : "?", cc)};
    f.fix = driver_too_old_fix(v.m, *need);
    out.push_back(std::move(f));
    return true;
  }
  {
    auto f = make_finding("driver-too-new-for-gpu");
    f.title = fmt::format("Driver {} no longer supports GPU {} ({}: last branch R{})", driver->str(), gpu_label(g),
                          arch->name, *arch->last_driver_branch);
    f.detail = fmt::format("NVIDIA moved {} GPUs to the legacy R{} branch; newer drivers do not bind them.", arch->name,
                           *arch->last_driver_branch);
    f.evidence = {pci_evidence(g.pci), v.snap.driver.kernel_module.version_line};
    f.fix = driver_too_new_fix(v.m, *arch->last_driver_branch);
    out.push_back(std::move(f));
    return true;
  }
}

}  // namespace

void no_gpu_rule(const View& v, std::vector<Finding>& out) {
  auto f = make_finding("no-nvidia-gpu");
  const auto& h = v.snap.host;
  const auto& others = v.snap.driver.other_display_devices;
  f.evidence.push_back(fmt::format("/sys/bus/pci/devices: no function with vendor 0x10de and class 0x03xxxx"));
  for (const auto& d : others) f.evidence.push_back(pci_evidence(d));
  if (!h.hypervisor.kind.empty()) {
    for (const auto& e : h.hypervisor.evidence) f.evidence.push_back(e);
    f.detail = fmt::format(
        "This is a virtual machine{}{}: a GPU appears in a VM only when the hypervisor passes one through "
        "(PCI passthrough or vGPU) or the cloud instance type includes one. None was given to this VM, so no driver, "
        "toolkit or framework on it can use a GPU.",
        h.hypervisor.kind == "unknown" ? "" : " (" + h.hypervisor.kind + ")",
        v.in_container ? fmt::format(", and cudoctor runs in a {} container inside it", h.container.kind) : "");
    f.fix = {
        "Run on an instance type that has an NVIDIA GPU, or pass a GPU through to this VM; nothing inside the "
        "VM can make one appear."};
  } else if (v.in_container) {
    f.detail = fmt::format(
        "A {} container sees the host's PCI bus through /sys, and it shows no NVIDIA GPU: the host itself has none "
        "(or has it disabled).",
        h.container.kind);
    f.fix = {"Run the container on a host with an NVIDIA GPU."};
  } else if (!others.empty()) {
    f.detail = fmt::format(
        "Only {} is visible. On a laptop with hybrid graphics the NVIDIA GPU disappears from the bus when the "
        "firmware or a GPU-switching tool sets integrated-only mode; on a desktop, check the card is seated and "
        "powered.",
        others.front().vendor_name.empty() ? "another vendor's GPU" : others.front().vendor_name + "'s GPU");
    f.fix = {
        "Enable the discrete GPU (firmware setup: hybrid or discrete mode; or the switching tool's hybrid mode: "
        "envycontrol --query, supergfxctl --get or prime-select query shows it), then reboot."};
  } else {
    f.detail =
        "No display or 3D controller from NVIDIA is on the PCI bus: the GPU is absent, not seated or powered, "
        "or disabled in the firmware.";
    f.fix = {"Check the card is seated and powered and enabled in the firmware setup."};
  }
  // Listing the bus only looks: a check, with lspci where it is installed.
  f.fix.checks.push_back(fixes::list_nvidia_pci(v.m));
  out.push_back(std::move(f));
}

void binding_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  std::vector<std::string> bound;
  for (const auto* g : v.pci_gpus) {
    const auto& d = g->pci;
    if (d.driver == "nouveau") {
      auto f = make_finding("nouveau-bound");
      f.title = fmt::format("nouveau holds GPU {}", gpu_label(*g));
      f.detail =
          "nouveau, the open-source driver, has no CUDA support; while it is bound the NVIDIA module cannot "
          "take the GPU.";
      f.evidence = {pci_evidence(d), modules_evidence(v)};
      f.fix = nouveau_fix(v.m, kb);
      out.push_back(std::move(f));
    } else if (d.driver == "vfio-pci" || d.driver == "pci-stub") {
      auto f = make_finding("gpu-bound-to-vfio");
      f.title = fmt::format("GPU {} is bound to {}", gpu_label(*g), d.driver);
      f.detail = "The GPU is reserved for passthrough to a virtual machine, so this system cannot use it.";
      f.evidence = {pci_evidence(d)};
      f.fix = vfio_fix(v.m);
      out.push_back(std::move(f));
    } else if (driver_vs_gpu_rule(v, *g, kb, out)) {
      continue;  // whatever sysfs shows: this driver cannot run it (a container sees the host's binding)
    } else if (d.driver.empty() && v.nvidia_loaded && !v.in_container) {
      auto f = make_finding("gpu-not-bound");
      f.title = fmt::format("The nvidia module did not take GPU {}", gpu_label(*g));
      f.detail =
          "The module is loaded but no driver is bound to this GPU. Usually the driver is too old to know "
          "this GPU, or the GPU failed to initialise; the kernel log says which.";
      f.evidence = {pci_evidence(d), v.snap.driver.kernel_module.version_line};
      f.fix = unbound_fix(v.m);
      out.push_back(std::move(f));
    } else if (d.driver == "nvidia") {
      bound.push_back(gpu_label(*g));
    }
  }
  auto f = make_finding("gpus-present");
  f.title = v.pci_gpus.size() == 1 ? fmt::format("NVIDIA GPU {}", gpu_label(*v.pci_gpus.front()))
                                   : fmt::format("{} NVIDIA GPUs on the PCI bus", v.pci_gpus.size());
  for (const auto* g : v.pci_gpus) f.evidence.push_back(pci_evidence(g->pci));
  out.insert(out.begin(), std::move(f));
}

}  // namespace cudoctor::rules::l1
