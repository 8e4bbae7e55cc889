// L1 under WSL2: the GPU reaches the distribution through /dev/dxg and the Windows driver's
// libraries, with no Linux kernel module.
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {

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
  capability_rule(v, out);
  library_rules(v, kb, out);
  nvml_rules(v, kb, false, out);
}

}  // namespace cudoctor::rules::l1
