// L1: the device nodes CUDA opens (/dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm) and the
// nvidia-uvm module: missing, created on demand by a setuid nvidia-modprobe, or not permitted.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {
namespace {

using fixes::as_root;

// nvidia-uvm or its node is missing.
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

// /dev/nvidiactl (ctl_missing) or the /dev/nvidiaN of these minors are missing.
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

// What the L1 node rules share: the nodes found and missing, counted once.
struct Nodes {
  const snapshot::DeviceNode* ctl = nullptr;
  std::vector<std::string> missing;   // "/dev/nvidiactl", "/dev/nvidiaN for 1 of 2 GPUs"
  std::vector<std::string> evidence;  // every node the probe looked at
  std::size_t numbered = 0;           // /dev/nvidiaN present
  std::vector<unsigned> missing_minors;
};

Nodes count_nodes(const View& v) {
  Nodes n;
  n.ctl = v.node("/dev/nvidiactl");
  if (!n.ctl) n.missing.emplace_back("/dev/nvidiactl");
  std::size_t bound = 0;
  for (const auto* g : v.pci_gpus) bound += g->pci.driver == "nvidia";
  for (const auto& d : v.snap.driver.device_nodes) {
    const auto rest = std::string_view(d.path).substr(std::min<std::size_t>(d.path.size(), 11));
    if (d.path.starts_with("/dev/nvidia") && !rest.empty() &&
        std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        d.type != snapshot::NodeType::missing)
      ++n.numbered;
    n.evidence.push_back(node_evidence(d));
  }
  if (n.numbered < bound) {
    n.missing.push_back(fmt::format("/dev/nvidiaN for {} of {} GPUs", bound - n.numbered, bound));
    for (unsigned i = 0; i < bound; ++i)
      if (!v.node(fmt::format("/dev/nvidia{}", i))) n.missing_minors.push_back(i);
  }
  return n;
}

// nvidia-uvm or /dev/nvidia-uvm missing; a setuid nvidia-modprobe loads it on first use.
void uvm_rule(const View& v, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const bool helper = drv.nvidia_modprobe_setuid;
  const bool uvm_module = v.module_loaded("nvidia_uvm");
  const auto* uvm = v.node("/dev/nvidia-uvm");
  if (uvm_module && uvm) return;
  auto f = make_finding(helper ? FindingId("uvm-loaded-on-demand") : FindingId("uvm-module-not-loaded"));
  f.title = !uvm_module ? "nvidia-uvm is not loaded" : "/dev/nvidia-uvm is missing";
  f.detail =
      "CUDA needs the nvidia-uvm module and its device node; without them cuInit fails (often as error 999, "
      "\"unknown error\", e.g. after a suspend/resume).";
  if (helper)
    f.detail += fmt::format(
        " {} is installed setuid root, so the first CUDA program loads it itself; if that "
        "fails, load it by hand.",
        drv.nvidia_modprobe);
  f.evidence = {modules_evidence(v), uvm ? node_evidence(*uvm) : "/dev/nvidia-uvm: missing"};
  f.fix = uvm_fix(v.m, uvm_module, uvm != nullptr);
  out.push_back(std::move(f));
}

// /dev/nvidiactl or a /dev/nvidiaN missing; a setuid nvidia-modprobe creates them on first use.
void missing_nodes_rule(const View& v, const Nodes& n, std::vector<Finding>& out) {
  if (n.missing.empty()) return;
  const auto& drv = v.snap.driver;
  const bool helper = drv.nvidia_modprobe_setuid;
  auto f = make_finding(helper ? FindingId("device-nodes-created-on-demand") : FindingId("device-nodes-missing"));
  f.title = fmt::format("Missing device nodes: {}", fmt::join(n.missing, ", "));
  f.detail = "CUDA opens /dev/nvidiactl and one /dev/nvidiaN per GPU.";
  if (helper)
    f.detail += fmt::format(
        " {} is installed setuid root, so the first CUDA program creates them; they are "
        "created at boot when nvidia-persistenced runs.",
        drv.nvidia_modprobe);
  else
    f.detail += " Without a setuid nvidia-modprobe nothing creates them for an ordinary user.";
  f.evidence = n.evidence;
  f.fix = nodes_fix(v.m, n.ctl == nullptr, n.missing_minors);
  out.push_back(std::move(f));
}

// Nodes this user may not open for reading and writing. Returns whether there were any.
bool denied_nodes_rule(const View& v, std::vector<Finding>& out) {
  std::vector<std::string> denied;
  for (const auto& n : v.snap.driver.device_nodes)
    if (n.type != snapshot::NodeType::missing && n.path != "/dev/nvidia-uvm-tools" && n.path != "/dev/nvidia-modeset" &&
        (!n.can_read || !n.can_write))
      denied.push_back(node_evidence(n));
  if (denied.empty()) return false;
  auto f = make_finding("device-nodes-not-permitted");
  f.detail = fmt::format("CUDA opens these nodes for reading and writing; user {} (uid {}) may not.",
                         v.snap.host.user.empty() ? "?" : v.snap.host.user, v.snap.host.uid);
  f.evidence = denied;
  std::string groups;
  for (const auto g : v.snap.host.gids) groups += (groups.empty() ? "" : ",") + std::to_string(g);
  f.evidence.push_back(fmt::format("user uid {} groups {}", v.snap.host.uid, groups));
  f.fix = nodes_not_permitted_fix(v.m);
  out.push_back(std::move(f));
  return true;
}

}  // namespace

void node_rules(const View& v, std::vector<Finding>& out) {
  if (!v.nvidia_loaded) return;
  const auto nodes = count_nodes(v);
  uvm_rule(v, out);
  missing_nodes_rule(v, nodes, out);
  const bool denied = denied_nodes_rule(v, out);
  if (nodes.missing.empty() && !denied && nodes.ctl) {
    auto f = make_finding("device-nodes-ok");
    f.title =
        fmt::format("Device nodes present and usable ({} GPU node{})", nodes.numbered, nodes.numbered == 1 ? "" : "s");
    f.evidence = nodes.evidence;
    out.push_back(std::move(f));
  }
}
}  // namespace cudoctor::rules::l1
