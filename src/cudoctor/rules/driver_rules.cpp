#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {
namespace {

using l1::gpu_label;
using l1::modules_evidence;
using l1::node_evidence;
using l1::pci_evidence;
using l1::View;
using snapshot::DeviceNode;
using snapshot::DriverLibrary;
using snapshot::Gpu;

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

// The driver branch against the GPU's architecture, from the knowledge base: a GPU newer
// than the driver, or an old GPU whose last driver branch has passed, is never bound.
bool driver_vs_gpu_rule(const View& v, const Gpu& g, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
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
    f.fix = l1::driver_too_old_fix(v.m, *need);
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
    f.fix = l1::driver_too_new_fix(v.m, *arch->last_driver_branch);
    out.push_back(std::move(f));
    return true;
  }
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
      f.fix = l1::nouveau_fix(v.m, kb);
      out.push_back(std::move(f));
    } else if (d.driver == "vfio-pci" || d.driver == "pci-stub") {
      auto f = make_finding("gpu-bound-to-vfio");
      f.title = fmt::format("GPU {} is bound to {}", gpu_label(*g), d.driver);
      f.detail = "The GPU is reserved for passthrough to a virtual machine, so this system cannot use it.";
      f.evidence = {pci_evidence(d)};
      f.fix = l1::vfio_fix(v.m);
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
      f.fix = l1::unbound_fix(v.m);
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
    f.fix = l1::module_on_host_fix();
  } else if (!blocks.empty()) {
    f = make_finding("nvidia-module-blacklisted");
    for (const auto* b : blocks) f.evidence.push_back(fmt::format("{}: {}", b->source, b->line));
    f.detail =
        "A modprobe configuration or kernel parameter keeps the module from loading (often left over from a "
        "switch to integrated graphics).";
    f.fix = l1::blacklist_fix(v.m, blocks);
  } else if (h.secure_boot.value_or(false)) {
    f = make_finding("module-blocked-by-secure-boot");
    f.detail =
        "With Secure Boot on, the kernel refuses modules not signed by a key it trusts; a driver built by "
        "DKMS is signed with a machine-owner key (MOK) that must be enrolled first.";
    f.fix = l1::secure_boot_fix(v.m);
  } else {
    f = make_finding("nvidia-module-not-loaded");
    if (drv.module_files.empty()) {
      f.detail = fmt::format(
          "No nvidia.ko is installed for the running kernel {}: the driver is not installed, or it "
          "was built for another kernel (a kernel update without DKMS rebuilding it).",
          h.kernel);
      f.fix = l1::module_not_loaded_fix(v.m, kb, false);
    } else {
      f.detail = "The module is installed for this kernel but not loaded; loading it by hand shows why it failed.";
      f.fix = l1::module_not_loaded_fix(v.m, kb, true);
    }
    for (const auto& m : drv.module_files) f.evidence.push_back("installed: " + m);
  }
  if (blocks.empty())  // a blacklist in a source that could not be read is not known to be absent
    for (const auto& s : drv.blacklist_sources_unreadable) f.evidence.push_back(s + ": could not read its blacklists");
  f.evidence.push_back(modules_evidence(v));
  f.evidence.push_back("/proc/driver/nvidia/version: missing");
  if (h.secure_boot) f.evidence.push_back(h.secure_boot_evidence);
  out.push_back(std::move(f));
}

// The NVIDIA Container Toolkit mounts the driver's files by the capabilities the container
// asks for (its user guide, "Driver capabilities"): compute brings libcuda.so.1 and
// /dev/nvidia-uvm, utility NVML and nvidia-smi. Unset or empty asks for the default,
// compute and utility; a list without compute or all leaves CUDA nothing to start with.
void capability_rule(const View& v, std::vector<Finding>& out) {
  if (!v.in_container) return;
  const auto* var = v.m.nvidia_env("NVIDIA_DRIVER_CAPABILITIES");
  if (!var || util::trim(var->value).empty()) return;
  bool utility = false;
  for (const auto c : util::split(var->value, ',')) {
    const auto t = util::trim(c);
    if (t == "compute" || t == "all") return;
    utility = utility || t == "utility";
  }
  const auto value = util::printable(var->value);
  auto f = make_finding("container-capability-missing");
  f.title = fmt::format(
      "The container asks for the driver capabilities \"{}\", without compute: no libcuda.so.1 is "
      "mounted",
      value);
  f.detail = fmt::format(
      "The NVIDIA Container Toolkit mounts the driver's files by the capabilities the container asks "
      "for: compute brings libcuda.so.1 and /dev/nvidia-uvm, utility NVML and nvidia-smi. Without "
      "compute (or all) CUDA cannot start in this {} container{}.",
      v.snap.host.container.kind, utility ? ", though nvidia-smi works" : "");
  f.evidence.push_back(fmt::format("NVIDIA_DRIVER_CAPABILITIES={} ({})", value, var->source));
  if (!v.library("libcuda.so.1")) f.evidence.emplace_back("libcuda.so.1: not found by the loader");
  f.fix = l1::capability_fix(v.snap.host.container.kind, *var);
  out.push_back(std::move(f));
}

// Device nodes and the container case. Returns false when the container has no GPU access
// (everything after follows from it).
bool node_rules(const View& v, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto* ctl = v.node("/dev/nvidiactl");
  if (v.in_container && !ctl) {
    auto f = make_finding("container-no-gpu-access");
    f.detail = fmt::format(
        "The host has the GPU and its driver (the PCI bus and the kernel module show through), "
        "but this {} container has no /dev/nvidia* devices{}: it was started without GPUs.",
        v.snap.host.container.kind, v.library("libcuda.so.1") ? "" : " and no libcuda.so.1");
    for (const auto* g : v.pci_gpus) f.evidence.push_back(pci_evidence(g->pci));
    if (!drv.kernel_module.version_line.empty())
      f.evidence.push_back("/proc/driver/nvidia/version: " + drv.kernel_module.version_line);
    f.evidence.emplace_back("/dev/nvidiactl: missing");
    f.fix = l1::container_no_access_fix(v.snap.host.container.kind);
    out.push_back(std::move(f));
    capability_rule(v, out);
    return false;
  }
  // Before the missing pieces it explains: the report takes the first cause as the break.
  capability_rule(v, out);
  if (!v.nvidia_loaded) return true;

  const bool helper = drv.nvidia_modprobe_setuid;
  std::vector<std::string> missing;
  std::vector<std::string> evidence;
  if (!ctl) missing.emplace_back("/dev/nvidiactl");
  std::size_t bound = 0;
  for (const auto* g : v.pci_gpus) bound += g->pci.driver == "nvidia";
  std::size_t numbered = 0;
  for (const auto& n : drv.device_nodes) {
    const auto rest = std::string_view(n.path).substr(std::min<std::size_t>(n.path.size(), 11));
    if (n.path.starts_with("/dev/nvidia") && !rest.empty() &&
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        n.type != snapshot::NodeType::missing)
      ++numbered;
    evidence.push_back(node_evidence(n));
  }
  if (numbered < bound) missing.push_back(fmt::format("/dev/nvidiaN for {} of {} GPUs", bound - numbered, bound));
  std::vector<unsigned> missing_minors;
  if (numbered < bound)
    for (unsigned i = 0; i < bound; ++i)
      if (!v.node(fmt::format("/dev/nvidia{}", i))) missing_minors.push_back(i);

  const bool uvm_module = v.module_loaded("nvidia_uvm");
  const auto* uvm = v.node("/dev/nvidia-uvm");
  if (!uvm_module || !uvm) {
    auto f = make_finding("uvm-module-not-loaded");
    f.title = !uvm_module ? "nvidia-uvm is not loaded" : "/dev/nvidia-uvm is missing";
    f.detail =
        "CUDA needs the nvidia-uvm module and its device node; without them cuInit fails (often as error 999, "
        "\"unknown error\", e.g. after a suspend/resume).";
    if (helper) {
      f.severity = Severity::warn;
      f.detail += fmt::format(
          " {} is installed setuid root, so the first CUDA program loads it itself; if that "
          "fails, load it by hand.",
          drv.nvidia_modprobe);
    }
    f.evidence = {modules_evidence(v), uvm ? node_evidence(*uvm) : "/dev/nvidia-uvm: missing"};
    f.fix = l1::uvm_fix(v.m, uvm_module, uvm != nullptr);
    out.push_back(std::move(f));
  }
  if (!missing.empty()) {
    auto f = make_finding("device-nodes-missing");
    f.title = fmt::format("Missing device nodes: {}", fmt::join(missing, ", "));
    f.detail = "CUDA opens /dev/nvidiactl and one /dev/nvidiaN per GPU.";
    if (helper) {
      f.severity = Severity::warn;
      f.detail += fmt::format(
          " {} is installed setuid root, so the first CUDA program creates them; they are "
          "created at boot when nvidia-persistenced runs.",
          drv.nvidia_modprobe);
    } else {
      f.detail += " Without a setuid nvidia-modprobe nothing creates them for an ordinary user.";
    }
    f.evidence = evidence;
    f.fix = l1::nodes_fix(v.m, ctl == nullptr, missing_minors);
    out.push_back(std::move(f));
  }
  std::vector<std::string> denied;
  for (const auto& n : drv.device_nodes)
    if (n.type != snapshot::NodeType::missing && n.path != "/dev/nvidia-uvm-tools" && n.path != "/dev/nvidia-modeset" &&
        (!n.can_read || !n.can_write))
      denied.push_back(node_evidence(n));
  if (!denied.empty()) {
    auto f = make_finding("device-nodes-not-permitted");
    f.detail = fmt::format("CUDA opens these nodes for reading and writing; user {} (uid {}) may not.",
                           v.snap.host.user.empty() ? "?" : v.snap.host.user, v.snap.host.uid);
    f.evidence = denied;
    std::string groups;
    for (const auto g : v.snap.host.gids) groups += (groups.empty() ? "" : ",") + std::to_string(g);
    f.evidence.push_back(fmt::format("user uid {} groups {}", v.snap.host.uid, groups));
    f.fix = l1::nodes_not_permitted_fix(v.m);
    out.push_back(std::move(f));
  }
  if (missing.empty() && denied.empty() && ctl) {
    auto f = make_finding("device-nodes-ok");
    f.title = fmt::format("Device nodes present and usable ({} GPU node{})", numbered, numbered == 1 ? "" : "s");
    f.evidence = evidence;
    out.push_back(std::move(f));
  }
  return true;
}

std::string candidate_evidence(const snapshot::LibraryCandidate& c) {
  if (c.state == "dangling") return fmt::format("{}: a link to {}, which does not exist", c.path, c.target);
  if (c.state == "off_loader_path") return fmt::format("{}: in a directory the loader does not search", c.path);
  return fmt::format("{}: passed over by the loader: {}", c.path, c.reason);
}

void library_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto* cuda = v.library("libcuda.so.1");
  const auto* nvml = v.library("libnvidia-ml.so.1");
  const auto& kver = drv.kernel_module.version;
  if (!cuda) {
    if (!v.nvidia_loaded && !v.wsl2) return;  // the module finding already explains it
    auto f = make_finding("driver-library-missing");
    const DriverLibrary* entry = nullptr;
    for (const auto& l : drv.libraries)
      if (l.soname == "libcuda.so.1" && !entry) entry = &l;
    if (entry) {
      f.evidence.push_back(fmt::format("libcuda.so.1 not in: {}", fmt::join(entry->searched, ":")));
      for (const auto& c : entry->candidates) f.evidence.push_back(candidate_evidence(c));
    }
    f.fix = l1::library_missing_fix(v.m, kb, entry, f.title);
    const bool candidate = entry && !entry->candidates.empty();
    if (v.wsl2) {
      f.detail =
          "Under WSL2 libcuda.so.1 comes from the Windows driver in /usr/lib/wsl/lib; it is missing or not "
          "on the loader's path.";
    } else if (v.in_container) {
      f.detail =
          "The devices were passed in but not the driver libraries: the NVIDIA Container Toolkit mounts them "
          "when the container asks for the compute capability.";
    } else if (candidate) {
      f.detail = fmt::format(
          "The kernel module {}is loaded and the user-space half of the driver is on disk, but the "
          "loader cannot take it, so every CUDA program fails to load libcuda.so.1.",
          kver.empty() ? "" : kver + " ");
    } else {
      f.detail = fmt::format(
          "The kernel module {}is loaded but the user-space half of the same driver is not "
          "installed where the loader looks, so every CUDA program fails.",
          kver.empty() ? "" : kver + " ");
    }
    out.push_back(std::move(f));
    return;
  }
  // Driver versions: the kernel module and each user-space library must be the same release.
  std::vector<std::string> mismatched;
  for (const auto* l : {cuda, nvml}) {
    if (!l || l->version.empty() || kver.empty()) continue;
    const auto a = util::Version::parse(l->version);
    const auto b = util::Version::parse(kver);
    if (a && b && *a != *b) mismatched.push_back(fmt::format("{} {} ({})", l->soname, l->version, l->real_path));
  }
  const bool nvml_says = drv.nvml.init_code == 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
  if (!mismatched.empty() || nvml_says) {
    auto f = make_finding("driver-version-mismatch");
    if (!mismatched.empty())
      f.title = fmt::format("Kernel module {} but user-space driver {}", kver,
                            (cuda->version != kver && !cuda->version.empty()) ? cuda->version : nvml->version);
    f.detail =
        "The driver was upgraded but the running kernel still has the old module: every CUDA call and "
        "nvidia-smi fail (\"Failed to initialize NVML: Driver/library version mismatch\") until the new "
        "module is loaded.";
    if (v.in_container)
      f.detail +=
          " In a container the libraries should be the host's, mounted by the runtime; a libcuda baked into "
          "the image is another cause.";
    f.evidence.push_back(fmt::format("{}: {}", drv.kernel_module.version_source, drv.kernel_module.version_line));
    for (const auto& m : mismatched) f.evidence.push_back("user space: " + m);
    if (nvml_says)
      f.evidence.push_back(fmt::format("nvmlInit: {} ({})", drv.nvml.init_error_string, drv.nvml.init_error_name));
    f.fix = l1::version_mismatch_fix(v.m);
    out.push_back(std::move(f));
    return;
  }
  auto f = make_finding("driver-libraries-ok");
  f.title = fmt::format("User-space driver libcuda.so.1{}", cuda->version.empty() ? "" : " " + cuda->version);
  if (!kver.empty() && cuda->version == kver) f.title += ", same as the kernel module";
  for (const auto* l : {cuda, nvml})
    if (l) f.evidence.push_back(fmt::format("{} -> {} (found by {})", l->path, l->real_path, l->found_by));
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> driver_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& snap = m.snap;
  std::vector<Finding> out;
  View v(m);
  if (snap.host.wsl.kind == "wsl1") return out;
  if (v.wsl2) {
    if (const auto* dxg = v.node("/dev/dxg")) {
      auto f = make_finding("wsl-gpu-device");
      f.evidence.push_back(node_evidence(*dxg));
      out.push_back(std::move(f));
    } else {
      auto f = make_finding("wsl-no-gpu-device");
      f.detail =
          "WSL2 reaches the GPU through /dev/dxg, which the Windows side provides when a WSL-capable NVIDIA "
          "driver is installed on Windows.";
      f.evidence.emplace_back("/dev/dxg: missing");
      f.fix = {
          "From Windows: install the current NVIDIA driver, run wsl --update, then wsl --shutdown, and reopen the "
          "distribution."};
      out.push_back(std::move(f));
      l1::nvml_rules(v, kb, true, out);
      return out;
    }
    capability_rule(v, out);
    library_rules(v, kb, out);
    l1::nvml_rules(v, kb, false, out);
    return out;
  }

  if (!snap.driver.pci_listed) {
    auto f = make_finding("pci-unreadable");
    f.detail = "Without /sys/bus/pci, cudoctor cannot tell whether an NVIDIA GPU is present; the other checks go on.";
    f.evidence.emplace_back("/sys/bus/pci/devices: not readable");
    out.push_back(std::move(f));
  } else if (v.pci_gpus.empty()) {
    no_gpu_rule(v, out);
    l1::nvml_rules(v, kb, true, out);
    return out;
  } else {
    binding_rules(v, kb, out);
  }
  module_rules(v, kb, out);
  const bool has_access = node_rules(v, out);
  if (!has_access) {
    l1::nvml_rules(v, kb, true, out);
    return out;
  }
  library_rules(v, kb, out);
  bool broken_below = false;
  for (const auto& f : out) broken_below = broken_below || f.severity == Severity::error;
  l1::nvml_rules(v, kb, broken_below, out);
  return out;
}

}  // namespace cudoctor::rules
