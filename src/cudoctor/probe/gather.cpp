#include "cudoctor/probe/deep.hpp"
#include "cudoctor/probe/probes.hpp"

namespace cudoctor::probe {

snapshot::Snapshot gather(const sys::Sys& sys, const Options& options) {
  Context ctx(sys, options);
  snapshot::Snapshot snap;
  snap.host = probe_host(ctx);
  snap.host.tools = probe_tools(ctx);
  probe_packages(ctx, snap.host);

  auto pci = probe_pci(ctx);
  snap.driver.pci_listed = pci.listed;
  for (auto& d : pci.display) {
    if (d.vendor_id == 0x10de)  // NVIDIA's PCI vendor id
      snap.gpus.push_back({std::move(d), std::nullopt});
    else
      snap.driver.other_display_devices.push_back(std::move(d));
  }
  probe_modules(ctx, snap.driver);
  snap.driver.kernel_module = probe_kernel_module(ctx);
  snap.driver.module_files = probe_module_files(ctx, snap.host.kernel);
  snap.driver.device_nodes = probe_device_nodes(ctx);
  probe_nvidia_modprobe(ctx, snap.driver);
  snap.driver.libraries = probe_driver_libraries(ctx, snap.host);
  probe_unversioned_libcuda(ctx, snap.driver);
  probe_cdi(ctx, snap.driver);
  snap.toolkit = probe_toolkits(ctx);
  snap.python = probe_python(ctx, options.pythons);
  snap.settings = probe_settings(ctx, snap.python);
  probe_runtime(ctx, snap);  // NVML (L1) with the L4 and L5 children: they run at once
  if (options.deep) probe_deep(ctx, snap.python);

  // NVML's GPUs joined to the PCI functions by bus id; one sysfs does not show is kept.
  for (const auto& g : snap.driver.nvml.gpus) {
    bool matched = false;
    for (auto& gpu : snap.gpus)
      if (!g.pci_bus_id.empty() && gpu.pci.address == g.pci_bus_id) {
        gpu.nvml = g;
        matched = true;
      }
    if (!matched) snap.gpus.push_back({snapshot::PciDevice{}, g});
  }
  snap.driver.nvml.gpus.clear();  // they live in gpus[] now, joined to their PCI function
  snap.unreadable = ctx.take_unreadable();
  return snap;
}

}  // namespace cudoctor::probe
