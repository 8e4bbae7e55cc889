// L1: a forward-compatibility libcuda (cuda-compat) taken by the loader instead of the host
// driver's. It is newer than the kernel module by design, so it is never a "reboot" mismatch;
// whether it can work depends on the GPU (data-center only) and on the host's driver branch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_view.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::l1 {
namespace {

// A GPU forward compatibility does not run on, by its brand (gpus.json: GeForce and TITAN fail
// with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804); {nullptr, ""} when none is known to be one.
struct Unsupported {
  const kb::GpuBrand* brand = nullptr;
  std::string name;
};
Unsupported unsupported_gpu(const View& v, const kb::KnowledgeBase& kb) {
  for (const auto& g : v.snap.gpus) {
    const auto name = gpu_name(g);
    const auto* b = kb.brand_of(g.pci.device_id, name);
    if (b && b->forward_compat == false) return {b, name};
  }
  return {};
}

std::string gpu_names(const View& v) {
  std::vector<std::string> names;
  for (const auto& g : v.snap.gpus) {
    auto n = gpu_name(g);
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

bool forward_compat_rules(const View& v, const kb::KnowledgeBase& kb, const snapshot::DriverLibrary& cuda,
                          std::vector<Finding>& out) {
  if (!cuda.forward_compat) return false;
  const auto& fc = *cuda.forward_compat;
  const auto compat = util::Version::parse(cuda.version);
  const auto host = util::Version::parse(v.snap.driver.kernel_module.version);
  if (!compat || !host) return false;  // nothing to compare: the usual library rules judge it
  // The CUDA it brings: its note's, else the newest its driver version supports.
  std::string compat_cuda = fc.cuda;
  if (compat_cuda.empty())
    if (const auto c = kb.max_cuda_for_driver(*compat)) compat_cuda = c->str();
  const auto host_cuda = kb.max_cuda_for_driver(*host);
  const auto host_major = host->major();
  const bool branch_listed =
      fc.drivers.empty() || std::find(fc.drivers.begin(), fc.drivers.end(), host_major) != fc.drivers.end();
  const auto unsupported = unsupported_gpu(v, kb);
  const auto& consumer = unsupported.name;
  std::string why;
  if (*compat <= *host)
    why = fmt::format("it is not newer than the host's driver {}: it only hides the host's own libcuda", host->str());
  else if (!consumer.empty())
    why = fmt::format(
        "the {} is not a GPU forward compatibility runs on (data-center GPUs only): cuInit fails with "
        "error 804, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        consumer);
  else if (!branch_listed)
    why = fmt::format("its note lists host driver branches {}, not R{}", fmt::join(fc.drivers, ", "), host_major);

  const auto note_ev = fc.note ? fmt::format("{}: .note.cuda.fwd_compatibility: CUDA {}, host drivers [{}]",
                                             cuda.real_path, fc.cuda, fmt::join(fc.drivers, ", "))
                               : fmt::format("{}: in a compat directory{}", cuda.real_path,
                                             fc.note_error.empty() ? ", no forward-compatibility note"
                                                                   : ", note unreadable: " + fc.note_error);
  const auto module_ev =
      fmt::format("{}: {}", v.snap.driver.kernel_module.version_source, v.snap.driver.kernel_module.version_line);
  if (why.empty()) {
    auto f = make_finding("cuda-compat-in-use");
    f.title = fmt::format("Forward compatibility: libcuda {} (CUDA {}) from cuda-compat over the host's driver {}",
                          cuda.version, compat_cuda.empty() ? "?" : compat_cuda, host->str());
    f.detail = fmt::format(
        "The image brings a newer user-space driver than the host's kernel module {} on purpose: this is not a "
        "version mismatch and needs no reboot. It works on data-center GPUs only{}.",
        host->str(), consumer.empty() && gpu_names(v).empty() ? " (the GPU's name is not known here)" : "");
    f.evidence = {fmt::format("libcuda.so.1: {} -> {} ({})", cuda.path, cuda.real_path, cuda.found_by), note_ev,
                  module_ev};
    out.push_back(std::move(f));
    return true;
  }
  auto f = make_finding("cuda-compat-unusable");
  f.title = fmt::format("The cuda-compat libcuda {} cannot run over the host's driver {}: {}", cuda.version,
                        host->str(), why);
  const auto compat_cuda_v = util::Version::parse(compat_cuda);
  const auto needed = compat_cuda_v ? kb.min_driver_for_cuda(*compat_cuda_v) : std::nullopt;
  f.detail = fmt::format(
      "The loader takes libcuda from the image's forward-compatibility package (cuda-compat) instead of the host's "
      "driver. This is not a driver upgrade waiting for a reboot: the kernel module is the host's and stays {}.",
      host->str());
  f.evidence = {fmt::format("libcuda.so.1: {} -> {} ({})", cuda.path, cuda.real_path, cuda.found_by), note_ev,
                module_ev};
  if (const auto names = gpu_names(v); !names.empty()) f.evidence.push_back("GPU: " + names);
  if (unsupported.brand)
    f.evidence.push_back(fmt::format("brand {} (knowledge base): forward compatibility not supported ({})",
                                     unsupported.brand->brand, unsupported.brand->source));
  std::string text;
  if (*compat <= *host)
    text =
        "Take the compat directory off the loader's path (its /etc/ld.so.conf.d entry or LD_LIBRARY_PATH): the "
        "host's own libcuda is newer.";
  else
    text = fmt::format(
        "{}upgrade the host's driver to {} or newer (what CUDA {} needs, with its own libcuda), or use an image "
        "built for CUDA {} or older (what the host's driver {} supports).",
        v.in_container ? "On the host: " : "", needed ? needed->str() : "the branch for CUDA " + compat_cuda,
        compat_cuda.empty() ? "?" : compat_cuda, host_cuda ? host_cuda->str() : "?", host->str());
  f.fix = {text, {}, {"grep -rn compat /etc/ld.so.conf.d/", "echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n compat"}};
  out.push_back(std::move(f));
  return true;
}

}  // namespace cudoctor::rules::l1
