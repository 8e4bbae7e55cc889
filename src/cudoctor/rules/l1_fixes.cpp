#include "cudoctor/rules/l1_fixes.hpp"

#include <fmt/format.h>

namespace cudoctor::rules::l1 {
namespace {

using fixes::as_root;

// The oldest last branch among the GPUs' architectures (Kepler's 470); nullopt when every GPU
// is on the current drivers.
std::optional<int> legacy_of_gpus(const view::Machine& m, const kb::KnowledgeBase& kb) {
  std::optional<int> out;
  for (const auto& g : m.gpus)
    if (const auto* a = kb.architecture_of(g.cc); a && a->last_driver_branch)
      if (!out || *a->last_driver_branch < *out) out = a->last_driver_branch;
  return out;
}

}  // namespace

bool ubuntu(const view::Machine& m) {
  return m.snap.host.os_id == "ubuntu" || m.is_like("ubuntu");
}

void push_nonempty(std::vector<std::string>& v, std::string s) {
  if (!s.empty()) v.push_back(std::move(s));
}

std::string write_as_root(const view::Machine& m, const std::string& producer, const std::string& file) {
  if (m.root || m.has_tool("sudo")) return producer + " | " + as_root(m, "tee " + file);
  return as_root(m, producer + " > " + file);
}

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
  push_nonempty(out, fixes::install_packages(m, p));
  return out;
}

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

}  // namespace cudoctor::rules::l1
