#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/plausible.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {
namespace {

using snapshot::DeviceNode;
using snapshot::DriverLibrary;
using snapshot::Gpu;
using snapshot::Snapshot;

// What every L1 rule needs to know about the machine, derived once.
struct View {
  const Snapshot& snap;
  std::optional<util::Version> driver;  // view::Machine's: one witness for every rule
  bool in_container = false;
  bool wsl2 = false;
  bool nvidia_loaded = false;  // the kernel says so: /proc/modules or /proc/driver/nvidia
  std::vector<const Gpu*> pci_gpus;

  explicit View(const Snapshot& s) : snap(s) {
    in_container = !s.host.container.kind.empty();
    wsl2 = s.host.wsl.kind == "wsl2";
    nvidia_loaded = module_loaded("nvidia") || !s.driver.kernel_module.version.empty();
    for (const auto& g : s.gpus)
      if (!g.pci.address.empty()) pci_gpus.push_back(&g);
  }
  bool module_loaded(std::string_view name) const {
    for (const auto& m : snap.driver.modules)
      if (m.name == name) return m.loaded;
    return false;
  }
  const DeviceNode* node(std::string_view path) const {
    for (const auto& n : snap.driver.device_nodes)
      if (n.path == path && n.type != "missing") return &n;
    return nullptr;
  }
  const DriverLibrary* library(std::string_view soname) const {
    for (const auto& l : snap.driver.libraries)
      if (l.soname == soname && !l.path.empty()) return &l;
    return nullptr;
  }
};

// NVML's marketing name first (pci.ids lags new GPUs by months), then pci.ids, then ids.
std::string gpu_label(const Gpu& g) {
  if (g.nvml && !g.nvml->name.empty()) return fmt::format("{} {}", g.pci.address, g.nvml->name);
  if (!g.pci.device_name.empty()) return fmt::format("{} {}", g.pci.address, g.pci.device_name);
  return fmt::format("{} [10de:{:04x}]", g.pci.address, g.pci.device_id);
}

std::string pci_evidence(const snapshot::PciDevice& d) {
  return fmt::format("/sys/bus/pci/devices/{}: [{:04x}:{:04x}] class 0x{:06x}, driver {}{}", d.address, d.vendor_id,
                     d.device_id, d.class_code, d.driver.empty() ? "none" : d.driver,
                     d.device_name.empty() ? "" : " (" + d.device_name + ")");
}

std::string mode_string(const DeviceNode& n) {
  std::string s = n.type == "char_device" ? "c" : n.type == "file" ? "-" : "?";
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) s += (n.mode & (0400u >> i)) ? rwx[i] : '-';
  return s;
}

std::string node_evidence(const DeviceNode& n) {
  if (n.type == "missing") return n.path + ": missing";
  return fmt::format("{}: {} uid {} gid {}{}", n.path, mode_string(n), n.uid, n.gid,
                     n.type == "char_device" ? fmt::format(", device {}:{}", n.major, n.minor) : "");
}

std::string modules_evidence(const View& v) {
  std::string s = v.snap.driver.modules_listed ? "/proc/modules:" : "/proc/modules unreadable; /sys/module:";
  for (const auto& m : v.snap.driver.modules) s += fmt::format(" {}={}", m.name, m.loaded ? "loaded" : "absent");
  return s;
}

std::string container_fix_text(const std::string& kind) {
  if (kind == "kubernetes")
    return "Request the GPU in the pod spec (resources.limits nvidia.com/gpu) on a node running the NVIDIA device "
           "plugin or GPU operator.";
  if (kind == "podman") return "Start the container with the GPU passed through CDI.";
  if (kind == "apptainer") return "Start the container with --nv, which binds the host's driver and devices.";
  if (kind == "lxc") return "Pass the /dev/nvidia* devices into the container and mount the host's driver libraries.";
  return "Start the container with the GPUs requested; the host needs the NVIDIA Container Toolkit.";
}

std::vector<std::string> container_fix_commands(const std::string& kind) {
  if (kind == "kubernetes") return {"kubectl describe node <node> | grep -i nvidia.com/gpu"};
  if (kind == "podman")
    return {"sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
            "podman run --device nvidia.com/gpu=all <image> nvidia-smi"};
  if (kind == "apptainer") return {"apptainer exec --nv <image.sif> nvidia-smi"};
  if (kind == "lxc") return {"lxc config device add <container> gpu gpu", "lxc config set <container> nvidia.runtime true"};
  return {"sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
          "docker run --rm --gpus all <image> nvidia-smi"};
}

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
    f.fix = {"Run on an instance type that has an NVIDIA GPU, or pass a GPU through to this VM; nothing inside the "
             "VM can make one appear.",
             {"lspci -nn -d 10de:"}};
  } else if (v.in_container) {
    f.detail = fmt::format(
        "A {} container sees the host's PCI bus through /sys, and it shows no NVIDIA GPU: the host itself has none "
        "(or has it disabled).",
        h.container.kind);
    f.fix = {"Run the container on a host with an NVIDIA GPU.", {"lspci -nn -d 10de:"}};
  } else if (!others.empty()) {
    f.detail = fmt::format(
        "Only {} is visible. On a laptop with hybrid graphics the NVIDIA GPU disappears from the bus when the "
        "firmware or a GPU-switching tool sets integrated-only mode; on a desktop, check the card is seated and "
        "powered.",
        others.front().vendor_name.empty() ? "another vendor's GPU" : others.front().vendor_name + "'s GPU");
    f.fix = {"Enable the discrete GPU (firmware setup: hybrid or discrete mode; or the switching tool's hybrid mode), "
             "then reboot.",
             {"lspci -nn -d 10de:", "envycontrol --query  # or: supergfxctl --get, prime-select query"}};
  } else {
    f.detail = "No display or 3D controller from NVIDIA is on the PCI bus: the GPU is absent, not seated or powered, "
               "or disabled in the firmware.";
    f.fix = {"Check the card is seated and powered and enabled in the firmware setup.", {"lspci -nn -d 10de:"}};
  }
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
    f.title = fmt::format("Driver {} is older than GPU {} ({} needs ≥ {})", driver->str(), gpu_label(g), cc, need->str());
    f.detail = fmt::format("{} GPUs arrived with CUDA {}; no driver before {} can drive them, so the module leaves the GPU "
                           "unbound.",
                           arch ? arch->name : "These", kb.arch_cc(model->cc)->first_cuda.str(), need->str());
    f.evidence = {pci_evidence(g.pci), v.snap.driver.kernel_module.version_line,
                  fmt::format("knowledge base: {} = {}, {}", model->name, arch ? arch->name : "?", cc)};
    f.fix = {fmt::format("Install driver {} or newer.", need->str()),
             {"ubuntu-drivers list  # Ubuntu: then sudo ubuntu-drivers install", "cudoctor plan"}};
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
    f.fix = {fmt::format("Install the R{} legacy driver (CUDA up to what that branch supports).", *arch->last_driver_branch),
             {fmt::format("sudo apt install nvidia-driver-{}  # Debian: nvidia-tesla-{}-driver", *arch->last_driver_branch,
                          *arch->last_driver_branch)}};
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
      f.detail = "nouveau, the open-source driver, has no CUDA support; while it is bound the NVIDIA module cannot "
                 "take the GPU.";
      f.evidence = {pci_evidence(d), modules_evidence(v)};
      f.fix = {"Blacklist nouveau, rebuild the initramfs, install the NVIDIA driver and reboot.",
               {"echo -e 'blacklist nouveau\\noptions nouveau modeset=0' | sudo tee "
                "/etc/modprobe.d/blacklist-nouveau.conf",
                "sudo update-initramfs -u  # Fedora/RHEL: sudo dracut --force", "sudo reboot"}};
      out.push_back(std::move(f));
    } else if (d.driver == "vfio-pci" || d.driver == "pci-stub") {
      auto f = make_finding("gpu-bound-to-vfio");
      f.title = fmt::format("GPU {} is bound to {}", gpu_label(*g), d.driver);
      f.detail = "The GPU is reserved for passthrough to a virtual machine, so this system cannot use it.";
      f.evidence = {pci_evidence(d)};
      f.fix = {"Remove the GPU's id from the vfio-pci.ids= kernel parameter or the vfio modprobe options and reboot.",
               {"grep -r vfio /etc/modprobe.d /proc/cmdline"}};
      out.push_back(std::move(f));
    } else if (driver_vs_gpu_rule(v, *g, kb, out)) {
      continue;  // whatever sysfs shows: this driver cannot run it (a container sees the host's binding)
    } else if (d.driver.empty() && v.nvidia_loaded && !v.in_container) {
      auto f = make_finding("gpu-not-bound");
      f.title = fmt::format("The nvidia module did not take GPU {}", gpu_label(*g));
      f.detail = "The module is loaded but no driver is bound to this GPU. Usually the driver is too old to know "
                 "this GPU, or the GPU failed to initialise; the kernel log says which.";
      f.evidence = {pci_evidence(d), v.snap.driver.kernel_module.version_line};
      f.fix = {"Read the NVRM lines of the kernel log; install a driver branch that supports this GPU.",
               {"sudo dmesg | grep -i -e NVRM -e nvidia"}};
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
void module_rules(const View& v, std::vector<Finding>& out) {
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
    f.detail = fmt::format("Containers use the host's kernel; the host has no NVIDIA module loaded, so the GPU "
                           "cannot be used from this {} container or from the host.",
                           h.container.kind);
    f.fix = {"Install and load the NVIDIA driver on the host, then restart the container.",
             {"nvidia-smi  # on the host"}};
  } else if (!blocks.empty()) {
    f = make_finding("nvidia-module-blacklisted");
    for (const auto* b : blocks) f.evidence.push_back(fmt::format("{}: {}", b->source, b->line));
    f.detail = "A modprobe configuration or kernel parameter keeps the module from loading (often left over from a "
               "switch to integrated graphics).";
    std::vector<std::string> cmds;
    for (const auto* b : blocks) {
      if (b->source == "/proc/cmdline")
        cmds.push_back(fmt::format("# remove {} from the kernel command line (GRUB_CMDLINE_LINUX), then update-grub",
                                   b->line));
      else
        cmds.push_back(fmt::format("sudoedit {}  # delete: {}", b->source.substr(0, b->source.rfind(':')), b->line));
    }
    cmds.emplace_back("sudo update-initramfs -u && sudo reboot");
    f.fix = {"Remove the blacklist entries, then rebuild the initramfs and reboot.", cmds};
  } else if (h.secure_boot.value_or(false)) {
    f = make_finding("module-blocked-by-secure-boot");
    f.detail = "With Secure Boot on, the kernel refuses modules not signed by a key it trusts; a driver built by "
               "DKMS is signed with a machine-owner key (MOK) that must be enrolled first.";
    f.fix = {"Enroll the DKMS signing key and reboot (confirm the enrolment in the blue MOK screen), or turn off "
             "Secure Boot.",
             {"sudo dmesg | grep -i -e 'module verification' -e 'key was rejected' -e lockdown",
              "sudo mokutil --import /var/lib/dkms/mok.pub  # Ubuntu: /var/lib/shim-signed/mok/MOK.der", "sudo reboot"}};
  } else {
    f = make_finding("nvidia-module-not-loaded");
    if (drv.module_files.empty()) {
      f.detail = fmt::format("No nvidia.ko is installed for the running kernel {}: the driver is not installed, or it "
                             "was built for another kernel (a kernel update without DKMS rebuilding it).",
                             h.kernel);
      f.fix = {"Install the driver, or rebuild it for this kernel, then load it.",
               {"sudo dkms autoinstall  # if the driver was installed with DKMS",
                "sudo ubuntu-drivers install  # Ubuntu; Debian: sudo apt install nvidia-driver", "sudo modprobe nvidia"}};
    } else {
      f.detail = "The module is installed for this kernel but not loaded; loading it by hand shows why it failed.";
      f.fix = {"Load it and read the kernel log.", {"sudo modprobe nvidia", "sudo dmesg | grep -i -e NVRM -e nvidia"}};
    }
    for (const auto& m : drv.module_files) f.evidence.push_back("installed: " + m);
  }
  f.evidence.push_back(modules_evidence(v));
  f.evidence.push_back("/proc/driver/nvidia/version: missing");
  if (h.secure_boot) f.evidence.push_back(h.secure_boot_evidence);
  out.push_back(std::move(f));
}

// Device nodes and the container case. Returns false when the container has no GPU access
// (everything after follows from it).
bool node_rules(const View& v, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto* ctl = v.node("/dev/nvidiactl");
  if (v.in_container && !ctl) {
    auto f = make_finding("container-no-gpu-access");
    f.detail = fmt::format("The host has the GPU and its driver (the PCI bus and the kernel module show through), "
                           "but this {} container has no /dev/nvidia* devices{}: it was started without GPUs.",
                           v.snap.host.container.kind, v.library("libcuda.so.1") ? "" : " and no libcuda.so.1");
    for (const auto* g : v.pci_gpus) f.evidence.push_back(pci_evidence(g->pci));
    if (!drv.kernel_module.version_line.empty())
      f.evidence.push_back("/proc/driver/nvidia/version: " + drv.kernel_module.version_line);
    f.evidence.emplace_back("/dev/nvidiactl: missing");
    f.fix = {container_fix_text(v.snap.host.container.kind), container_fix_commands(v.snap.host.container.kind)};
    out.push_back(std::move(f));
    return false;
  }
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
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }) && n.type != "missing")
      ++numbered;
    evidence.push_back(node_evidence(n));
  }
  if (numbered < bound)
    missing.push_back(fmt::format("/dev/nvidiaN for {} of {} GPUs", bound - numbered, bound));

  const bool uvm_module = v.module_loaded("nvidia_uvm");
  const auto* uvm = v.node("/dev/nvidia-uvm");
  if (!uvm_module || !uvm) {
    auto f = make_finding("uvm-module-not-loaded");
    f.title = !uvm_module ? "nvidia-uvm is not loaded" : "/dev/nvidia-uvm is missing";
    f.detail = "CUDA needs the nvidia-uvm module and its device node; without them cuInit fails (often as error 999, "
               "\"unknown error\", e.g. after a suspend/resume).";
    if (helper) {
      f.severity = Severity::warn;
      f.detail += fmt::format(" {} is installed setuid root, so the first CUDA program loads it itself; if that "
                              "fails, load it by hand.",
                              drv.nvidia_modprobe);
    }
    f.evidence = {modules_evidence(v), uvm ? node_evidence(*uvm) : "/dev/nvidia-uvm: missing"};
    f.fix = {"Load nvidia-uvm and create its device node.", {"sudo modprobe nvidia-uvm", "sudo nvidia-modprobe -u -c=0"}};
    out.push_back(std::move(f));
  }
  if (!missing.empty()) {
    auto f = make_finding("device-nodes-missing");
    f.title = fmt::format("Missing device nodes: {}", fmt::join(missing, ", "));
    f.detail = "CUDA opens /dev/nvidiactl and one /dev/nvidiaN per GPU.";
    if (helper) {
      f.severity = Severity::warn;
      f.detail += fmt::format(" {} is installed setuid root, so the first CUDA program creates them; they are "
                              "created at boot when nvidia-persistenced runs.",
                              drv.nvidia_modprobe);
    } else {
      f.detail += " Without a setuid nvidia-modprobe nothing creates them for an ordinary user.";
    }
    f.evidence = evidence;
    f.fix = {"Create the nodes (or enable nvidia-persistenced, which creates them at boot).",
             {"sudo nvidia-modprobe -c=0 -u", "sudo systemctl enable --now nvidia-persistenced"}};
    out.push_back(std::move(f));
  }
  std::vector<std::string> denied;
  for (const auto& n : drv.device_nodes)
    if (n.type != "missing" && n.path != "/dev/nvidia-uvm-tools" && n.path != "/dev/nvidia-modeset" &&
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
    f.fix = {"Add the user to the group that owns the nodes (then log in again), or fix the udev rule that sets "
             "their mode.",
             {"ls -l /dev/nvidia*", "sudo usermod -aG \"$(stat -c %G /dev/nvidiactl)\" \"$USER\""}};
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

void library_rules(const View& v, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto* cuda = v.library("libcuda.so.1");
  const auto* nvml = v.library("libnvidia-ml.so.1");
  const auto& kver = drv.kernel_module.version;
  if (!cuda) {
    if (!v.nvidia_loaded && !v.wsl2) return;  // the module finding already explains it
    auto f = make_finding("driver-library-missing");
    for (const auto& l : drv.libraries)
      if (l.soname == "libcuda.so.1") f.evidence.push_back(fmt::format("libcuda.so.1 not in: {}", fmt::join(l.searched, ":")));
    if (v.wsl2) {
      f.detail = "Under WSL2 libcuda.so.1 comes from the Windows driver in /usr/lib/wsl/lib; it is missing or not "
                 "on the loader's path.";
      f.fix = {"Update the Windows NVIDIA driver and WSL, and make sure /usr/lib/wsl/lib is in the loader's path.",
               {"wsl --update  # from Windows", "ls -l /usr/lib/wsl/lib/libcuda.so.1", "cat /etc/ld.so.conf.d/ld.wsl.conf",
                "sudo ldconfig"}};
    } else if (v.in_container) {
      f.detail = "The devices were passed in but not the driver libraries: the NVIDIA Container Toolkit mounts them "
                 "when the container asks for the compute capability.";
      f.fix = {"Start the container with the toolkit's compute capability.",
               {"docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility <image>"}};
    } else {
      f.detail = fmt::format("The kernel module {}is loaded but the user-space half of the same driver is not "
                             "installed where the loader looks, so every CUDA program fails.",
                             kver.empty() ? "" : kver + " ");
      f.fix = {fmt::format("Install the user-space driver package of the same version{}.", kver.empty() ? "" : " (" + kver + ")"),
               {fmt::format("sudo apt install libnvidia-compute-{}  # Ubuntu; Debian: sudo apt install libcuda1",
                            kver.empty() ? std::string("<branch>") : kver.substr(0, kver.find('.')))}};
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
    f.detail = "The driver was upgraded but the running kernel still has the old module: every CUDA call and "
               "nvidia-smi fail (\"Failed to initialize NVML: Driver/library version mismatch\") until the new "
               "module is loaded.";
    if (v.in_container)
      f.detail += " In a container the libraries should be the host's, mounted by the runtime; a libcuda baked into "
                  "the image is another cause.";
    f.evidence.push_back(fmt::format("{}: {}", drv.kernel_module.version_source, drv.kernel_module.version_line));
    for (const auto& m : mismatched) f.evidence.push_back("user space: " + m);
    if (nvml_says) f.evidence.push_back(fmt::format("nvmlInit: {} ({})", drv.nvml.init_error_string, drv.nvml.init_error_name));
    f.fix = {"Reboot; or, with nothing using the GPU, reload the modules.",
             {"sudo reboot",
              "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia && sudo modprobe nvidia_uvm"}};
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

// NVML answered, but with values no NVML of NVIDIA's gives: not a healthy answer.
void implausible_nvml_rule(const std::string& lib, const std::vector<std::string>& bad, std::vector<Finding>& out) {
  auto f = make_finding("nvml-implausible");
  f.title = fmt::format("NVML answered with values that cannot be true: {}{}", bad.front(),
                        bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : "");
  f.detail = fmt::format("No NVML of NVIDIA's reports these: {} is damaged, is not the driver's own library, or "
                         "answered garbage. cudoctor does not take its answer as healthy; nvidia-smi and frameworks "
                         "that use NVML read the same values.",
                         lib.empty() ? "the library" : lib);
  for (const auto& b : bad) f.evidence.push_back(fmt::format("{}: {}", lib, b));
  f.fix = {"Check that libnvidia-ml.so.1 is the driver's own file; reinstall the driver if it is not.",
           {"ls -l " + (lib.empty() ? std::string("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1") : lib),
            "nvidia-smi --query-gpu=index,name,driver_version,compute_cap --format=csv"}};
  out.push_back(std::move(f));
}

void nvml_rules(const View& v, const kb::KnowledgeBase& kb, bool explained_above, std::vector<Finding>& out) {
  const auto& n = v.snap.driver.nvml;
  const auto& o = n.outcome;
  if (o.status == "not_run") return;
  const std::string lib = n.library;
  if (o.status != "ok") {
    auto f = make_finding("nvml-failed");
    const auto call = o.last_call.empty() ? std::string() : " (in " + o.last_call + ")";
    if (o.status == "crashed")
      f.title = fmt::format("NVML crashed{}: {} in {}", call, o.message, lib);
    else if (o.status == "timeout")
      f.title = fmt::format("NVML hung{}: no answer from {} ({})", call, lib, o.message);
    else if (o.status == "load_failed")
      f.title = fmt::format("NVML could not be loaded from {}", lib);
    else
      f.title = fmt::format("NVML gave no answer from {} ({})", lib, o.status);
    f.detail = "cudoctor ran NVML in a separate process, so the report is whole; a program that uses NVML on this "
               "machine (nvidia-smi, a framework) will fail the same way.";
    f.evidence.push_back(fmt::format("child process: {} after {:.2f} s: {}", o.status, o.seconds, o.message));
    f.fix = {"Check the driver installation is whole and the kernel log for NVRM or Xid errors.",
             {"nvidia-smi --query-gpu=index,name,driver_version --format=csv", "sudo dmesg | grep -i -e NVRM -e xid"}};
    out.push_back(std::move(f));
    return;
  }
  if (n.init_code < 0) {
    // A reply that parsed but holds no nvmlInit result ("{}"): nothing NVML said is usable.
    implausible_nvml_rule(lib, {"no result of nvmlInit in its reply"}, out);
    return;
  }
  if (n.init_code != 0) {
    if (n.init_code == 18) return;  // driver-version-mismatch says it, with the fix
    auto f = make_finding("nvml-error");
    const auto* rc = kb.nvml_return_code(n.init_code);
    // A code nvml.h does not name is shown as its number, not as a made-up name.
    const auto name = rc                                                                      ? rc->name
                      : !n.init_error_name.empty() && !n.init_error_name.ends_with("_?") ? n.init_error_name
                                                                                          : fmt::format("return code {}", n.init_code);
    f.title = fmt::format("NVML: {} ({})", n.init_error_string.empty() ? "nvmlInit failed" : n.init_error_string, name);
    if (rc) {
      f.detail = rc->meaning + ".";
      if (!rc->causes.empty()) f.detail += " " + rc->causes;
    }
    if (explained_above) {
      f.severity = Severity::info;
      f.detail += " Here this follows from the finding above.";
    }
    f.evidence.push_back(fmt::format("{}: nvmlInit_v2() = {} {} \"{}\"", lib, n.init_code, name, n.init_error_string));
    if (rc) f.evidence.push_back("meaning: " + rc->source);
    if (n.init_code == 4)
      f.fix = {"Give the user access to the device nodes (see above).", {"ls -l /dev/nvidia*"}};
    else if (!explained_above)
      f.fix = {"Check the kernel module and the kernel log.", {"nvidia-smi --query-gpu=index,name,driver_version --format=csv",
                "sudo dmesg | grep -i -e NVRM -e nvidia"}};
    out.push_back(std::move(f));
    return;
  }
  std::vector<const snapshot::NvmlGpu*> gpus;
  for (const auto& g : v.snap.gpus)
    if (g.nvml) gpus.push_back(&*g.nvml);
  const int pci = v.snap.driver.pci_listed && !v.wsl2 ? static_cast<int>(v.pci_gpus.size()) : -1;
  if (const auto bad = implausible_nvml(n, gpus, pci); !bad.empty()) {
    implausible_nvml_rule(lib, bad, out);
    return;
  }
  auto f = make_finding("nvml-ok");
  f.title = fmt::format("NVML: driver {}, CUDA {}, {} GPU{}", n.driver_version,
                        n.cuda_driver_version ? util::cuda_version_string(n.cuda_driver_version) : "?", gpus.size(),
                        gpus.size() == 1 ? "" : "s");
  for (const auto* g : gpus)
    f.evidence.push_back(fmt::format("GPU {} {} {}: cc {}, {:.1f} GiB, PCIe gen {}/{} x{}/{}, persistence {}, MIG {}",
                                     g->index, g->pci_bus_id, g->name, g->compute_capability,
                                     static_cast<double>(g->memory_total_bytes) / (1024.0 * 1024 * 1024),
                                     g->pcie_gen_current, g->pcie_gen_max, g->pcie_width_current, g->pcie_width_max,
                                     g->persistence_mode.empty() ? "?" : g->persistence_mode,
                                     g->mig_mode.empty() ? "n/a" : g->mig_mode));
  out.push_back(std::move(f));
  std::size_t bound = 0;
  for (const auto* g : v.pci_gpus) bound += g->pci.driver == "nvidia";
  if (!v.in_container && gpus.size() < bound) {
    auto w = make_finding("gpu-count-mismatch");
    w.title = fmt::format("NVML sees {} of the {} GPUs bound to nvidia", gpus.size(), bound);
    w.detail = "A GPU that the driver holds but NVML does not list has usually failed (fallen off the bus, Xid 79) "
               "or is being reset.";
    for (const auto* g : v.pci_gpus) {
      bool seen = false;
      for (const auto* n2 : gpus) seen = seen || n2->pci_bus_id == g->pci.address;
      if (!seen) w.evidence.push_back("not seen by NVML: " + pci_evidence(g->pci));
    }
    w.fix = {"Read the kernel log for Xid errors; a reset or reboot brings the GPU back.",
             {"sudo dmesg | grep -i xid", "nvidia-smi -q | grep -i -A2 'retired\\|remapp'"}};
    out.push_back(std::move(w));
  }
}

}  // namespace

std::vector<Finding> driver_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& snap = m.snap;
  std::vector<Finding> out;
  View v(snap);
  v.driver = m.driver.version;
  if (snap.host.wsl.kind == "wsl1") return out;
  if (v.wsl2) {
    if (const auto* dxg = v.node("/dev/dxg")) {
      auto f = make_finding("wsl-gpu-device");
      f.evidence.push_back(node_evidence(*dxg));
      out.push_back(std::move(f));
    } else {
      auto f = make_finding("wsl-no-gpu-device");
      f.detail = "WSL2 reaches the GPU through /dev/dxg, which the Windows side provides when a WSL-capable NVIDIA "
                 "driver is installed on Windows.";
      f.evidence.emplace_back("/dev/dxg: missing");
      f.fix = {"Install the current NVIDIA driver on Windows, update WSL, and restart it.",
               {"wsl --update  # from Windows", "wsl --shutdown  # from Windows, then reopen the distribution"}};
      out.push_back(std::move(f));
      nvml_rules(v, kb, true, out);
      return out;
    }
    library_rules(v, out);
    nvml_rules(v, kb, false, out);
    return out;
  }

  if (!snap.driver.pci_listed) {
    auto f = make_finding("pci-unreadable");
    f.detail = "Without /sys/bus/pci, cudoctor cannot tell whether an NVIDIA GPU is present; the other checks go on.";
    f.evidence.emplace_back("/sys/bus/pci/devices: not readable");
    out.push_back(std::move(f));
  } else if (v.pci_gpus.empty()) {
    no_gpu_rule(v, out);
    nvml_rules(v, kb, true, out);
    return out;
  } else {
    binding_rules(v, kb, out);
  }
  module_rules(v, out);
  const bool has_access = node_rules(v, out);
  if (!has_access) {
    nvml_rules(v, kb, true, out);
    return out;
  }
  library_rules(v, out);
  bool broken_below = false;
  for (const auto& f : out) broken_below = broken_below || f.severity == Severity::error;
  nvml_rules(v, kb, broken_below, out);
  return out;
}

}  // namespace cudoctor::rules
