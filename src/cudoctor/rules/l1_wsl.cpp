// L1 under WSL2: the GPU reaches the distribution through /dev/dxg and the Windows driver's
// libraries in /usr/lib/wsl/lib, with no Linux kernel module. NVIDIA's CUDA on WSL guide: no
// Linux driver is to be installed inside the distribution, and WSL's own libraries must stay
// on the loader's path (/etc/ld.so.conf.d/ld.wsl.conf, which WSL writes).
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {
namespace {

constexpr const char* k_wsl_lib = "/usr/lib/wsl/lib";

// Packages of a native Linux driver (the distributions' and NVIDIA's repository names), which
// must not be installed inside WSL.
bool native_driver_package(const std::string& n) {
  for (const char* p : {"nvidia-driver", "nvidia-dkms", "nvidia-kernel", "libnvidia-compute", "nvidia-utils",
                        "cuda-drivers", "libcuda1", "nvidia-headless", "nvidia-open", "nvidia-compute"})
    if (n.starts_with(p)) return true;
  return false;
}

// A native Linux driver inside WSL: its libcuda.so.1 found before WSL's, or its packages installed.
bool native_driver_rule(const View& v, std::vector<Finding>& out) {
  std::vector<std::string> pkgs;
  for (const auto& p : v.snap.host.packages)
    if (native_driver_package(p.name)) pkgs.push_back(p.name);
  const auto* cuda = v.library("libcuda.so.1");
  const bool native_lib =
      cuda && !cuda->path.empty() && !cuda->real_path.starts_with(k_wsl_lib) && !cuda->path.starts_with(k_wsl_lib);
  if (!native_lib && pkgs.empty()) return false;
  auto f = make_finding("wsl-native-driver-installed");
  f.title = native_lib ? fmt::format("A native Linux driver's libcuda.so.1 ({}) is used inside WSL2, not WSL's",
                                     cuda->real_path.empty() ? cuda->path : cuda->real_path)
                       : "A native Linux NVIDIA driver is installed inside WSL2";
  f.detail =
      "Under WSL2 the GPU belongs to the Windows driver, whose libraries WSL puts in /usr/lib/wsl/lib; a Linux "
      "driver installed in the distribution has no kernel module to talk to, and its libcuda.so.1 fails (or hides "
      "WSL's). NVIDIA's CUDA on WSL guide says to install no Linux driver there.";
  if (native_lib) f.evidence.push_back(fmt::format("libcuda.so.1 -> {} ({})", cuda->real_path, cuda->found_by));
  for (const auto& p : pkgs) f.evidence.push_back("installed package: " + p);
  f.fix.text =
      "Remove the Linux driver packages, rebuild the loader's cache, and restart WSL from Windows (wsl --shutdown). "
      "Install the toolkit from NVIDIA's WSL-Ubuntu repository (cuda-toolkit-X-Y, never cuda or cuda-drivers).";
  if (const auto rm = fixes::remove_packages(v.m, pkgs); !rm.empty()) f.fix.commands.push_back(rm);
  f.fix.commands.push_back(fixes::as_root(v.m, "ldconfig"));
  if (native_lib && pkgs.empty()) f.fix.checks.push_back(fmt::format("ls -l {}", fixes::shell_quote(cuda->real_path)));
  out.push_back(std::move(f));
  return true;
}

// WSL's libcuda.so.1 exists, but the loader does not search /usr/lib/wsl/lib.
bool off_loader_path_rule(const View& v, std::vector<Finding>& out) {
  const snapshot::DriverLibrary* cuda = nullptr;  // View::library gives found ones only
  for (const auto& l : v.snap.driver.libraries)
    if (l.soname == "libcuda.so.1") cuda = &l;
  if (!cuda || !cuda->path.empty()) return false;
  const snapshot::LibraryCandidate* wsl = nullptr;
  for (const auto& c : cuda->candidates)
    if (c.path.starts_with(k_wsl_lib) && c.state == "off_loader_path") wsl = &c;
  if (!wsl) return false;
  auto f = make_finding("wsl-libraries-off-loader-path");
  f.detail =
      "WSL writes /etc/ld.so.conf.d/ld.wsl.conf naming /usr/lib/wsl/lib, where the Windows driver's libcuda.so.1 "
      "is; the file is missing, or the loader's cache was built without it, so no program finds libcuda.so.1.";
  f.evidence.push_back(fmt::format("{}: present, not on the loader's path", wsl->path));
  f.fix.text = "Name /usr/lib/wsl/lib to the loader again and rebuild its cache.";
  f.fix.commands = {fixes::as_root(v.m, "sh -c 'echo /usr/lib/wsl/lib > /etc/ld.so.conf.d/ld.wsl.conf'"),
                    fixes::as_root(v.m, "ldconfig")};
  f.fix.checks = {"ldconfig -p | grep libcuda.so.1"};
  out.push_back(std::move(f));
  return true;
}

}  // namespace

void wsl_rules(const View& v, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
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
    nvml_rules(v, kb, true, out);
    return;
  }
  // Before the missing or mismatched libraries they explain.
  const bool explained = native_driver_rule(v, out) | off_loader_path_rule(v, out);
  capability_rule(v, out);
  library_rules(v, kb, out);
  unversioned_libcuda_rule(v, out);
  nvml_rules(v, kb, explained, out);
}

}  // namespace cudoctor::rules::l1
