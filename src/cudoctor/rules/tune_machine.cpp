// Tuning of the machine as a whole: persistence mode, and the device order that
// CUDA_VISIBLE_DEVICES indices follow on a machine with GPUs of different models.
#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/tune.hpp"
#include "cudoctor/rules/tune_values.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::tune {

// Persistence mode off: an idle GPU is torn down, and the next CUDA program waits for it.
void persistence(const view::Machine& m, std::vector<Finding>& out) {
  if (m.wsl2) return;
  std::vector<std::string> off;
  for (const auto& g : m.snap.gpus)
    if (g.nvml && g.nvml->persistence_mode == "disabled")
      off.push_back(fmt::format("GPU {} ({}): persistence mode disabled (NVML)", g.nvml->index, g.nvml->name));
  if (off.empty()) return;
  auto f = make_finding("tune-persistence-off");
  f.detail =
      "While no process holds the GPU, the driver tears its state down; the next CUDA program then waits for the "
      "GPU to be initialised again (seconds on a machine with several GPUs), and the GPU loses settings such as "
      "application clocks. NVIDIA's nvidia-persistenced keeps it initialised. (Source: "
      "https://docs.nvidia.com/deploy/driver-persistence/index.html.)";
  f.evidence = off;
  if (m.in_container)
    f.fix = {"On the host, enable nvidia-persistenced."};
  else if (m.has_tool("nvidia-persistenced") && m.has_tool("systemctl"))
    f.fix = {"Enable nvidia-persistenced.", {fixes::as_root(m, "systemctl enable --now nvidia-persistenced")}};
  else
    f.fix = {"Install and enable nvidia-persistenced (it comes with the driver)."};
  out.push_back(std::move(f));
}

// GPUs of different models, chosen by index: CUDA numbers them fastest first, nvidia-smi by PCI
// bus, so CUDA_VISIBLE_DEVICES=1 need not be nvidia-smi's GPU 1 (CUDA Programming Guide,
// CUDA_DEVICE_ORDER).
void device_order(const view::Machine& m, const std::vector<Group>& gs, std::vector<Finding>& out) {
  std::vector<std::string> names;
  for (const auto& g : m.gpus)
    if (std::find(names.begin(), names.end(), g.name) == names.end()) names.push_back(g.name);
  if (names.size() < 2) return;
  const Group* visible = nullptr;
  bool pci_order = false;
  for (const auto& g : gs) {
    if (!g.in_process()) continue;
    if (g.name == "CUDA_VISIBLE_DEVICES") visible = &g;
    if (g.name == "CUDA_DEVICE_ORDER") pci_order = g.value == "PCI_BUS_ID";
  }
  if (!visible || pci_order) return;
  bool by_index = false;
  for (const auto item : util::split(visible->value, ',')) by_index = by_index || read_int(util::trim(item)).whole;
  if (!by_index) return;
  auto f = make_finding("tune-device-order");
  f.title = fmt::format("CUDA_VISIBLE_DEVICES={} counts GPUs fastest first, not as nvidia-smi does", visible->value);
  f.detail =
      "This machine has GPUs of different models. Without CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA numbers them fastest "
      "first, so the indices in CUDA_VISIBLE_DEVICES need not be the GPUs nvidia-smi shows under those numbers: a "
      "job can land on the other GPU. (Source: "
      "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables.)";
  f.evidence = where(*visible);
  for (const auto& g : m.gpus) {
    if (!g.gpu) continue;
    if (g.gpu->nvml)
      f.evidence.push_back(
          fmt::format("nvidia-smi GPU {}: {} at {}", g.gpu->nvml->index, g.name, g.gpu->nvml->pci_bus_id));
    else
      f.evidence.push_back(fmt::format("{} at {} ({})", g.name, g.gpu->pci.address, g.source));
  }
  f.fix = {"Number GPUs as nvidia-smi does (or name them by UUID in CUDA_VISIBLE_DEVICES).",
           {"export CUDA_DEVICE_ORDER=PCI_BUS_ID"}};
  out.push_back(std::move(f));
}

}  // namespace cudoctor::rules::tune
