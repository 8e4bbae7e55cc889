#include <fmt/format.h>

#include "cudoctor/plan/plan.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::plan {

Inputs inputs_from_snapshot(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb) {
  Inputs in;
  for (const auto& g : snap.gpus) {
    if (g.nvml && !g.nvml->compute_capability.empty()) {
      in.cc = util::Version::parse(g.nvml->compute_capability);
      in.gpu = g.nvml->name;
      in.gpu_source = "NVML";
    } else if (const auto* m = kb.gpu_by_pci_id(g.pci.device_id); m && !g.pci.address.empty()) {
      in.cc = m->cc;
      in.gpu = m->name;
      in.gpu_source = fmt::format("PCI id 10de:{:04x}", g.pci.device_id);
    }
    if (in.cc) break;
  }
  const auto& d = snap.driver;
  if (auto v = util::Version::parse(d.kernel_module.version)) {
    in.driver = v;
    in.driver_source = d.kernel_module.version_source;
  } else if (auto n = util::Version::parse(d.nvml.driver_version)) {
    in.driver = n;
    in.driver_source = "NVML";
  } else {
    for (const auto& l : d.libraries)
      if (l.soname == "libcuda.so.1")
        if (auto lv = util::Version::parse(l.version)) {
          in.driver = lv;
          in.driver_source = l.real_path;
        }
  }
  return in;
}

}  // namespace cudoctor::plan
