// The report in Prometheus' text exposition format, for node_exporter's textfile collector:
// every family with HELP and TYPE, gauges only, no timestamps (the collector refuses them),
// GPU series labelled gpu, UUID and pci_bus_id as dcgm-exporter labels them, so the two join.
// Metric and label names are documented in docs/fleet.md.
#include <fmt/format.h>

#include <map>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::render {

namespace {

// A label value as the exposition format escapes it: backslash, double quote and newline.
std::string label_value(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

class Exposition {
 public:
  // Starts a family; its samples follow.
  void family(const char* name, const char* help) {
    m_name = name;
    m_out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  }
  void sample(const Labels& labels, double value) {
    m_out += m_name;
    if (!labels.empty()) {
      m_out += '{';
      for (std::size_t i = 0; i < labels.size(); ++i)
        m_out += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, label_value(labels[i].second));
      m_out += '}';
    }
    m_out += fmt::format(" {}\n", value);
  }
  std::string take() { return std::move(m_out); }

 private:
  std::string m_name;
  std::string m_out;
};

std::string cuda_text(int v) {
  return v > 0 ? util::cuda_version_string(v) : "";
}

}  // namespace

std::string prometheus(const report::Report& r, const Options& o) {
  const auto& s = r.snapshot;
  Exposition e;
  e.family("cudoctor_up", "1: cudoctor ran its check and wrote this file.");
  e.sample({}, 1);
  if (o.run_seconds >= 0) {
    e.family("cudoctor_run_duration_seconds", "How long the check took, in seconds.");
    e.sample({}, o.run_seconds);
  }
  e.family("cudoctor_healthy", "1 when no layer of the GPU stack is broken, 0 when one is.");
  e.sample({}, r.verdict.healthy ? 1 : 0);
  e.family("cudoctor_broken_layer",
           "The lowest broken layer: 0 host, 1 driver, 2 toolkit, 3 framework, 4 CUDA runtime, 5 compute; -1 none.");
  e.sample({}, r.verdict.break_layer ? static_cast<int>(*r.verdict.break_layer) : -1);
  e.family("cudoctor_finding",
           "1 for each problem found (an error or a warning), by finding id (docs/findings.md), severity and layer.");
  std::map<std::string, int> by_severity{{"error", 0}, {"warn", 0}};
  for (const auto* f : report::problems(r)) {
    e.sample({{"id", f->id},
              {"severity", std::string(rules::to_string(f->severity))},
              {"layer", std::string(rules::to_string(f->layer))},
              {"break", f->id == r.verdict.break_finding ? "true" : "false"}},
             1);
    ++by_severity[std::string(rules::to_string(f->severity))];
  }
  e.family("cudoctor_problems", "How many problems were found, by severity.");
  for (const auto& [sev, n] : by_severity) e.sample({{"severity", sev}}, n);
  e.family("cudoctor_info", "1, labelled with the versions this report was made with.");
  e.sample({{"version", o.tool_version},
            {"knowledge_base", r.kb_date},
            {"kernel_module", s.driver.kernel_module.version},
            {"driver", s.driver.nvml.driver_version},
            {"cuda_driver", cuda_text(s.driver.nvml.cuda_driver_version)}},
           1);

  std::vector<std::pair<Labels, const snapshot::NvmlGpu*>> gpus;
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    const auto& g = s.gpus[i];
    const auto* n = g.nvml ? &*g.nvml : nullptr;
    gpus.push_back({{{"gpu", std::to_string(n ? n->index : static_cast<int>(i))},
                     {"UUID", n ? n->uuid : ""},
                     {"pci_bus_id", n && !n->pci_bus_id.empty() ? n->pci_bus_id : g.pci.address}},
                    n});
  }
  e.family("cudoctor_gpu_info", "1 for each NVIDIA GPU, labelled with its name and compute capability.");
  for (const auto& [labels, n] : gpus) {
    auto l = labels;
    l.emplace_back("name", n ? n->name : "");
    l.emplace_back("compute_capability", n ? n->compute_capability : "");
    e.sample(l, 1);
  }
  const auto per_gpu = [&](const char* name, const char* help, auto value) {
    bool any = false;
    for (const auto& [labels, n] : gpus)
      if (n) any = true;
    if (!any) return;
    e.family(name, help);
    for (const auto& [labels, n] : gpus) value(labels, n);
  };
  const auto link = [&](const Labels& labels, const char* kind, int v) {
    if (v < 0) return;
    auto l = labels;
    l.emplace_back("kind", kind);
    e.sample(l, v);
  };
  per_gpu("cudoctor_gpu_pcie_link_generation",
          "The PCIe generation the GPU's link trained at (current) and can reach (max).",
          [&](const Labels& l, const snapshot::NvmlGpu* n) {
            if (!n) return;
            link(l, "current", n->pcie_gen_current);
            link(l, "max", n->pcie_gen_max);
          });
  per_gpu("cudoctor_gpu_pcie_link_width", "The PCIe lanes of the GPU's link: trained (current) and possible (max).",
          [&](const Labels& l, const snapshot::NvmlGpu* n) {
            if (!n) return;
            link(l, "current", n->pcie_width_current);
            link(l, "max", n->pcie_width_max);
          });
  per_gpu("cudoctor_gpu_power_limit_watts", "The GPU's power limit: set (current), enforced and default, in watts.",
          [&](const Labels& l, const snapshot::NvmlGpu* n) {
            if (!n) return;
            link(l, "current", n->power_limit_w);
            link(l, "enforced", n->power_limit_enforced_w);
            link(l, "default", n->power_limit_default_w);
          });
  per_gpu("cudoctor_gpu_clocks_event_reasons",
          "NVML's clocks-event reasons bit mask (nvml.h nvmlClocksEventReason*: 0x4 SwPowerCap, 0x8 HwSlowdown, 0x20 "
          "SwThermalSlowdown, 0x40 HwThermalSlowdown, 0x80 HwPowerBrakeSlowdown).",
          [&](const Labels& l, const snapshot::NvmlGpu* n) {
            if (n && n->clocks_event_reasons >= 0) e.sample(l, static_cast<double>(n->clocks_event_reasons));
          });
  return e.take();
}

}  // namespace cudoctor::render
