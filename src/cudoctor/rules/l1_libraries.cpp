// L1: the user-space driver: libcuda.so.1 not found (and which candidate explains why), a
// release other than the kernel module's, or both libraries in place.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules::l1 {
namespace {

using fixes::as_root;
using snapshot::DriverLibrary;

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

// libcuda.so.1 is not found: from its candidates (a dangling link, a copy off the loader's
// path, one the loader passed over), else not installed. title is set where a candidate
// explains it better than the catalog's "not installed".
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
    push_nonempty(f.commands, install);
    f.commands.push_back(as_root(m, "ldconfig"));
    if (install.empty())
      f.text = "Reinstall the driver's user-space package that owns it, then rebuild the loader's cache.";
    return f;
  }
  Fix f{fmt::format("Install the user-space driver package of the same version{}.",
                    kver.empty() ? "" : " (" + kver + ")")};
  push_nonempty(f.commands, install);
  return f;
}

// Kernel module and user-space driver of different releases.
Fix version_mismatch_fix(const view::Machine& m) {
  if (m.in_container)
    return {
        "On the host: reboot, or with nothing using the GPU reload the modules. If this image brings its own "
        "libcuda.so.1, remove it: the runtime mounts the host's."};
  return {"Reboot; or, with nothing using the GPU, reload the modules.",
          {as_root(m, "reboot"), as_root(m, "rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia") + " && " +
                                     as_root(m, "modprobe nvidia") + " && " + as_root(m, "modprobe nvidia_uvm")}};
}

std::string candidate_evidence(const snapshot::LibraryCandidate& c) {
  if (c.state == "dangling") return fmt::format("{}: a link to {}, which does not exist", c.path, c.target);
  if (c.state == "off_loader_path") return fmt::format("{}: in a directory the loader does not search", c.path);
  return fmt::format("{}: passed over by the loader: {}", c.path, c.reason);
}

// libcuda.so.1 is not where the loader looks: why, from the files the probe found under that name.
void library_missing_rule(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto& kver = drv.kernel_module.version;
  auto f = make_finding("driver-library-missing");
  const DriverLibrary* entry = nullptr;
  for (const auto& l : drv.libraries)
    if (l.soname == "libcuda.so.1" && !entry) entry = &l;
  if (entry) {
    f.evidence.push_back(fmt::format("libcuda.so.1 not in: {}", fmt::join(entry->searched, ":")));
    for (const auto& c : entry->candidates) f.evidence.push_back(candidate_evidence(c));
  }
  f.fix = library_missing_fix(v.m, kb, entry, f.title);
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
}

// The kernel module and each user-space library must be the same release. Returns whether they
// are not.
bool version_mismatch_rule(const View& v, const DriverLibrary& cuda, const DriverLibrary* nvml,
                           std::vector<Finding>& out) {
  const auto& drv = v.snap.driver;
  const auto& kver = drv.kernel_module.version;
  std::vector<std::string> mismatched;
  for (const auto* l : {&cuda, nvml}) {
    if (!l || l->version.empty() || kver.empty()) continue;
    const auto a = util::Version::parse(l->version);
    const auto b = util::Version::parse(kver);
    if (a && b && *a != *b) mismatched.push_back(fmt::format("{} {} ({})", l->soname, l->version, l->real_path));
  }
  const bool nvml_says = drv.nvml.init_code == 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
  if (mismatched.empty() && !nvml_says) return false;
  auto f = make_finding("driver-version-mismatch");
  if (!mismatched.empty())
    f.title = fmt::format("Kernel module {} but user-space driver {}", kver,
                          (cuda.version != kver && !cuda.version.empty()) ? cuda.version : nvml->version);
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
  f.fix = version_mismatch_fix(v.m);
  out.push_back(std::move(f));
  return true;
}

}  // namespace

void library_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto* cuda = v.library("libcuda.so.1");
  const auto* nvml = v.library("libnvidia-ml.so.1");
  const auto& kver = v.snap.driver.kernel_module.version;
  if (!cuda) {
    if (v.nvidia_loaded || v.wsl2) library_missing_rule(v, kb, out);  // else the module finding explains it
    return;
  }
  // A cuda-compat libcuda is newer than the module by design: judged as forward compatibility.
  if (forward_compat_rules(v, kb, *cuda, out)) return;
  if (version_mismatch_rule(v, *cuda, nvml, out)) return;
  auto f = make_finding("driver-libraries-ok");
  f.title = fmt::format("User-space driver libcuda.so.1{}", cuda->version.empty() ? "" : " " + cuda->version);
  if (!kver.empty() && cuda->version == kver) f.title += ", same as the kernel module";
  for (const auto* l : {cuda, nvml})
    if (l) f.evidence.push_back(fmt::format("{} -> {} (found by {})", l->path, l->real_path, l->found_by));
  out.push_back(std::move(f));
}

}  // namespace cudoctor::rules::l1
