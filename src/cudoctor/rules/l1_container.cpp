// L1 in a container: started without GPUs, without the driver capability that brings
// libcuda.so.1, or with an image whose NVIDIA_REQUIRE_* the host's driver does not meet.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/container_require.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::l1 {
namespace {

// The container was started without GPUs, per runtime.
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

// The container's NVIDIA_DRIVER_CAPABILITIES names no compute capability.
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

}  // namespace

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
  f.fix = capability_fix(v.snap.host.container.kind, *var);
  out.push_back(std::move(f));
}

namespace {

// NVIDIA_VISIBLE_DEVICES as the NVIDIA Container Toolkit reads it (internal/config/image/
// devices.go): "void", empty or unset (on an image that requires CUDA) inject nothing; "none"
// injects the driver but no GPU. The variable when it asks for no GPU, else nullptr.
const snapshot::EnvVar* no_devices_requested(const View& v) {
  const auto* var = v.m.nvidia_env("NVIDIA_VISIBLE_DEVICES");
  if (!var) return nullptr;
  const auto value = util::trim(var->value);
  return value.empty() || value == "void" || value == "none" ? var : nullptr;
}

// The container has the driver's control node but not one GPU node: started with
// NVIDIA_VISIBLE_DEVICES=none, which the toolkit answers with the driver and no GPU.
void visible_devices_none_rule(const View& v, std::vector<Finding>& out) {
  const auto* var = no_devices_requested(v);
  if (!var || util::trim(var->value) != "none") return;
  for (const auto& n : v.snap.driver.device_nodes) {
    const auto name = n.path.substr(n.path.rfind('/') + 1);
    if (n.type != snapshot::NodeType::missing && name.size() > 6 && name.starts_with("nvidia") &&
        std::isdigit(static_cast<unsigned char>(name[6])))
      return;  // a GPU node is there: something else passed a GPU in
  }
  auto f = make_finding("container-visible-devices-none");
  f.detail =
      "The NVIDIA Container Toolkit reads NVIDIA_VISIBLE_DEVICES=none as \"the driver, but no GPU\": libcuda.so.1 "
      "and /dev/nvidiactl are there, /dev/nvidia0 is not, and CUDA finds no device (error 100).";
  f.evidence.push_back(fmt::format("NVIDIA_VISIBLE_DEVICES=none ({})", var->source));
  f.evidence.emplace_back("/dev/nvidiactl: present, no /dev/nvidia<N>");
  f.fix = {
      fmt::format("Start the container with the GPUs it needs: on the host, {}. An image that sets the "
                  "variable (ENV in its Dockerfile) is overridden by -e.",
                  v.snap.host.container.kind == "podman"
                      ? "podman run --device nvidia.com/gpu=all -e NVIDIA_VISIBLE_DEVICES=all <image>"
                      : "docker run --gpus all -e NVIDIA_VISIBLE_DEVICES=all <image>")};
  out.push_back(std::move(f));
}

}  // namespace

bool container_access_rules(const View& v, std::vector<Finding>& out) {
  const bool access = !v.in_container || v.node("/dev/nvidiactl");
  if (!access) {
    const auto& drv = v.snap.driver;
    auto f = make_finding("container-no-gpu-access");
    if (const auto* var = no_devices_requested(v)) {
      const auto value = std::string(util::trim(var->value));
      f.title = fmt::format("NVIDIA_VISIBLE_DEVICES={}: the container was given no GPU",
                            value.empty() ? "\"\"" : util::printable(value));
      f.evidence.push_back(fmt::format("NVIDIA_VISIBLE_DEVICES={} ({}): {}", util::printable(var->value), var->source,
                                       value == "none" ? "the driver without a GPU" : "nothing injected"));
    }
    f.detail = fmt::format(
        "The host has the GPU and its driver (the PCI bus and the kernel module show through), "
        "but this {} container has no /dev/nvidia* devices{}: it was started without GPUs.",
        v.snap.host.container.kind, v.library("libcuda.so.1") ? "" : " and no libcuda.so.1");
    for (const auto* g : v.pci_gpus) f.evidence.push_back(pci_evidence(g->pci));
    if (!drv.kernel_module.version_line.empty())
      f.evidence.push_back("/proc/driver/nvidia/version: " + drv.kernel_module.version_line);
    f.evidence.emplace_back("/dev/nvidiactl: missing");
    f.fix = container_no_access_fix(v.snap.host.container.kind);
    out.push_back(std::move(f));
  }
  // Before the missing pieces it explains: the report takes the first cause as the break.
  if (access && v.in_container) visible_devices_none_rule(v, out);
  capability_rule(v, out);
  return access;
}
// The image's requirements (every NVIDIA_REQUIRE_* but _JETPACK, as the toolkit collects them)
// against the host's driver: its kernel module, the newest CUDA the knowledge base gives that
// branch, and each GPU's compute capability. The brand is not known here, so an alternative
// that needs one is "may hold". NVIDIA_DISABLE_REQUIRE=true turns the toolkit's check off.
void requirement_rule(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  if (!v.in_container || !v.driver) return;
  const auto* disable = v.m.nvidia_env("NVIDIA_DISABLE_REQUIRE");
  const bool disabled = disable && parse_go_bool(disable->value).value_or(false);
  RequireFacts facts;
  facts.driver = v.driver;
  if (!kb.driver_beyond_kb(*v.driver)) facts.cuda = kb.max_cuda_for_driver(*v.driver);
  if (v.m.gpus.size() == 1) facts.arch = v.m.gpus.front().cc;
  for (const auto& var : v.snap.host.nvidia_env) {
    if (!var.name.starts_with("NVIDIA_REQUIRE_") || var.name.starts_with("NVIDIA_REQUIRE_JETPACK")) continue;
    const auto verdict = evaluate_require(var.value, facts);
    if (!verdict.valid || verdict.met == Met::yes) continue;
    const auto host = fmt::format("driver {}{}", v.driver->str(),
                                  facts.cuda ? fmt::format(" (CUDA {})", facts.cuda->str()) : std::string());
    const auto value = util::printable(var.value, 600);
    const auto check = var.source == "/proc/1/environ"
                           ? fmt::format("tr '\\0' '\\n' < /proc/1/environ | grep {}", var.name)
                           : fmt::format("printenv {}", var.name);
    if (verdict.met == Met::unknown) {
      auto f = make_finding("container-requirement-by-brand");
      f.title = fmt::format("The image's {} holds on the host's {} only through \"{}\"", var.name, host,
                            util::printable(verdict.undecided));
      f.detail =
          "That alternative names a GPU brand and an older driver branch: NVIDIA's images list them so that the "
          "image's CUDA runs on that branch through its forward-compatibility package (cuda-compat). That package "
          "works on data-center GPUs only: on GeForce and most workstation GPUs CUDA fails in this container with "
          "error 804 (forward compatibility was attempted on non supported HW).";
      f.evidence = {fmt::format("{}={} ({})", var.name, value, var.source), "host: " + host};
      f.fix.checks = {check};
      out.push_back(std::move(f));
      continue;
    }
    auto f = make_finding("container-requirement-unmet");
    f.title = fmt::format("The image requires {} ({}); the host's {} does not meet it", util::printable(verdict.first),
                          var.name, host);
    f.detail = fmt::format(
        "nvidia-container-cli refuses such a container (\"requirement error: unsatisfied condition: {}, please "
        "update your driver to a newer version, or use an earlier cuda container\"){}. CUDA programs in it fail "
        "with error 35 (CUDA driver version is insufficient for CUDA runtime version).",
        util::printable(verdict.first),
        disabled ? fmt::format("; NVIDIA_DISABLE_REQUIRE={} turned that check off, so this one started",
                               util::printable(disable->value))
                 : "; this one was started without that check (CDI, or another runtime)");
    f.evidence = {fmt::format("{}={} ({})", var.name, value, var.source), "host: " + host};
    if (disabled) f.evidence.push_back(fmt::format("NVIDIA_DISABLE_REQUIRE={} ({})", disable->value, disable->source));
    // The driver the image's CUDA needs, when the requirement is a plain cuda>=X.Y.
    std::string need;
    if (const auto e = std::string_view(verdict.first); e.starts_with("cuda>="))
      if (const auto cuda = util::Version::parse(e.substr(6)))
        if (const auto d = kb.min_driver_for_cuda(*cuda))
          need = fmt::format(" to ≥ {} (CUDA {})", d->str(), cuda->str());
    f.fix = {
        fmt::format("On the host: upgrade the driver{}; or use an image built for the CUDA the host's driver "
                    "supports{}.",
                    need, facts.cuda ? fmt::format(" (≤ {})", facts.cuda->str()) : std::string())};
    f.fix.checks = {check};
    out.push_back(std::move(f));
  }
}

}  // namespace cudoctor::rules::l1
