// What the knowledge base does not know about this machine: a driver of a branch newer than
// its newest, a GPU id not in its table, a toolkit or a framework release newer than its
// records. Each is said, with the knowledge base's date and what was assumed instead, so that
// no other finding's limit is taken for a fact the data never held.
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/rules.hpp"

namespace cudoctor::rules {
namespace {

std::string kb_dated(const kb::KnowledgeBase& kb) {
  return kb.date().empty() ? "the knowledge base (undated)" : "the knowledge base (compiled " + kb.date() + ")";
}

void driver_rule(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto& d = m.driver.version;
  if (!d || !kb.driver_beyond_kb(*d)) return;
  const auto* newest = kb.newest_branch();
  auto f = make_finding("driver-newer-than-kb");
  f.title = fmt::format("Driver {} is newer than every branch {} knows", d->str(), kb_dated(kb));
  f.detail = fmt::format(
      "Its newest branch is R{} (CUDA {} natively). Assumed: this driver runs at least what R{} runs; "
      "which newer CUDA versions it supports, and which GPUs it may have dropped, are not known.",
      newest->branch, newest->max_cuda.str(), newest->branch);
  f.evidence = {fmt::format("driver {} ({})", d->str(), m.driver.source),
                fmt::format("{}: newest branch R{} -> CUDA {}", kb_dated(kb), newest->branch, newest->max_cuda.str())};
  out.push_back(std::move(f));
}

// The driver API's view of the device at this PCI address, nullptr when it gave none.
const snapshot::CudaDevice* cuda_device(const view::Machine& m, const snapshot::Gpu& g) {
  for (const auto& d : m.snap.runtime.driver_api.devices)
    if (!g.pci.address.empty() && d.pci_bus_id == g.pci.address) return &d;
  return nullptr;
}

void gpu_rule(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  for (const auto& g : m.snap.gpus) {
    if (g.pci.address.empty() || g.pci.vendor_id != 0x10de || kb.gpu_by_pci_id(g.pci.device_id)) continue;
    const auto* dev = cuda_device(m, g);
    std::string name = g.nvml ? g.nvml->name : dev ? dev->name : "";
    std::string cc, cc_from;
    if (g.nvml && !g.nvml->compute_capability.empty()) {
      cc = g.nvml->compute_capability;
      cc_from = "NVML";
    } else if (dev && !dev->compute_capability.empty()) {
      cc = dev->compute_capability;
      cc_from = "the CUDA driver API";
    }
    auto f = make_finding("gpu-not-in-kb");
    const auto id = fmt::format("10de:{:04x}", g.pci.device_id);
    f.title = fmt::format("GPU {}{} is not in {}", id, name.empty() ? "" : " (" + name + ")", kb_dated(kb));
    const auto v = util::Version::parse(cc);
    if (!v)
      f.detail =
          "Its compute capability is not known (neither NVML nor the CUDA driver answered), so the checks that "
          "need it (kernels, the driver's support for the GPU) are skipped for it.";
    else if (!kb.architecture_of(*v))
      f.detail = fmt::format(
          "{} reports compute capability {}, which is in no architecture the knowledge base knows: which toolkits "
          "compile for it and which builds carry its kernels are not known.",
          cc_from, cc);
    else
      f.detail = fmt::format(
          "Assumed: compute capability {}, as {} reports it ({}); the checks of kernels and toolkits use it.", cc,
          cc_from, kb.architecture_of(*v)->name);
    f.evidence = {fmt::format("{}: PCI id {}", g.pci.address, id)};
    if (!name.empty()) f.evidence.push_back(fmt::format("name: {}", name));
    if (v) f.evidence.push_back(fmt::format("compute capability {} ({})", cc, cc_from));
    out.push_back(std::move(f));
  }
}

void toolkit_rule(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  const auto newest = kb.newest_cuda();
  if (!newest) return;
  for (const auto& t : m.snap.toolkit.toolkits) {
    const auto v = util::Version::parse(t.version);
    if (!v || util::Version{{v->major(), v->minor()}, ""} <= *newest) continue;
    auto f = make_finding("toolkit-newer-than-kb");
    f.title = fmt::format("CUDA {} at {} is newer than every toolkit {} knows", t.version, t.root, kb_dated(kb));
    f.detail = fmt::format(
        "Its minimum driver and the GPUs it compiles for are not known. Assumed: at least what CUDA {} needs{}.",
        newest->str(),
        kb.minor_compat_floor(v->major())
            ? fmt::format(", and any {}.x runtime runs on a driver ≥ {} through minor-version compatibility",
                          v->major(), kb.minor_compat_floor(v->major())->str())
            : "");
    f.evidence = {fmt::format("{}: CUDA {}", t.root, t.version),
                  fmt::format("{}: newest CUDA {}", kb_dated(kb), newest->str())};
    out.push_back(std::move(f));
  }
}

void framework_rule(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  for (const auto& env : m.snap.python.envs)
    for (const auto& fw : env.frameworks) {
      const auto* known = kb.framework(fw.name);
      const auto v = util::Version::parse(fw.version.substr(0, fw.version.find_first_not_of("0123456789.")));
      if (!known || !v) continue;
      const auto* rec = kb.release_of(*known, *v);
      const bool beyond = kb.release_beyond_kb(*known, *v);
      const bool planned = rec && rec->status == "planned";
      if (!beyond && !planned) continue;
      auto f = make_finding("framework-newer-than-kb");
      f.title = planned ? fmt::format("{} {} in {} is a release {} knows only as planned", known->display, fw.version,
                                      env.prefix, kb_dated(kb))
                        : fmt::format("{} {} in {} is newer than every release {} knows", known->display, fw.version,
                                      env.prefix, kb_dated(kb));
      f.detail =
          "Assumed: nothing from the knowledge base's records of it (Python versions, published kernels); it is "
          "judged by what its own files say: the CUDA it was built for and the kernels in its binaries.";
      f.evidence = {fmt::format("{}: {} {}{}", env.prefix, fw.name, fw.version,
                                fw.cuda.empty() ? "" : ", built for CUDA " + fw.cuda)};
      if (!known->releases.empty())
        f.evidence.push_back(
            fmt::format("{}: newest {} record {}{}", kb_dated(kb), fw.name, known->releases.front().version,
                        known->releases.front().status.empty() ? "" : " (" + known->releases.front().status + ")"));
      out.push_back(std::move(f));
    }
}

}  // namespace

std::vector<Finding> kb_coverage_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  std::vector<Finding> out;
  driver_rule(m, kb, out);
  gpu_rule(m, kb, out);
  toolkit_rule(m, kb, out);
  framework_rule(m, kb, out);
  return out;
}

}  // namespace cudoctor::rules
