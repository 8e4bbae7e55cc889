// L1 in a container: started without GPUs, or without the driver capability that brings
// libcuda.so.1.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
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

bool container_access_rules(const View& v, std::vector<Finding>& out) {
  const bool access = !v.in_container || v.node("/dev/nvidiactl");
  if (!access) {
    const auto& drv = v.snap.driver;
    auto f = make_finding("container-no-gpu-access");
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
  capability_rule(v, out);
  return access;
}
}  // namespace cudoctor::rules::l1
