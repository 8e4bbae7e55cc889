// `cudoctor kb`: answers to single questions about the knowledge base, as text.
#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/plan/plan.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {

// The records may come from --kb files: every string of theirs is escaped.
using util::visible;

std::string kb_summary(const kb::KnowledgeBase& kb, bool verbose) {
  std::string out =
      fmt::format("cudoctor knowledge base, compiled {}\n\n", kb.date().empty() ? "(undated)" : visible(kb.date()));
  const auto& t = kb.toolkit_releases();
  out += fmt::format("  {:>4} CUDA toolkit releases, {} to {}, with their minimum drivers\n", t.size(),
                     t.empty() ? "" : visible(t.back().release), t.empty() ? "" : visible(t.front().release));
  const auto& b = kb.driver_branches();
  out += fmt::format("  {:>4} driver branches, R{} to R{}, with the newest CUDA each supports\n", b.size(),
                     b.empty() ? 0 : b.front().branch, b.empty() ? 0 : b.back().branch);
  out += fmt::format("  {:>4} NVIDIA GPUs by PCI id, {} architectures\n", kb.gpus().size(), kb.architectures().size());
  for (const auto& f : kb.frameworks()) {
    std::string not_released;  // what is only planned, withdrawn, or on weaker sources
    for (const auto& r : f.releases)
      if (!r.status.empty()) not_released += (not_released.empty() ? "" : ", ") + visible(r.version + " " + r.status);
    out += fmt::format("  {:>4} {} releases, {} to {}{}\n", f.releases.size(), visible(f.display),
                       f.releases.empty() ? "" : visible(f.releases.back().version),
                       f.releases.empty() ? "" : visible(f.releases.front().version),
                       not_released.empty() ? "" : " (" + not_released + ")");
  }
  out += fmt::format("  {:>4} CUDA runtime and driver error codes, {} NVML return codes\n", kb.cuda_errors().size(),
                     kb.nvml_return_codes().size());
  const auto sources = kb.sources();
  out += fmt::format("\n{} distinct sources{}\n", sources.size(), verbose ? ":" : " (-v lists them)");
  if (verbose)
    for (const auto& s : sources) out += "  " + visible(s) + "\n";
  out += "\nAsk: cudoctor kb gpu NAME|PCI-ID · kb driver VERSION · kb toolkit VERSION · kb error CODE|NAME|MESSAGE\n";
  return out;
}

std::string kb_gpu(const kb::KnowledgeBase& kb, const std::vector<const kb::GpuModel*>& hits) {
  std::string out;
  for (const auto* g : hits) {
    out += fmt::format("10de:{:04x}  {}\n", g->pci_id, visible(g->name));
    out += fmt::format("  architecture {}, compute capability {} ({})\n", visible(g->architecture), g->cc.str(),
                       plan::sm(g->cc));
    if (const auto* c = kb.arch_cc(g->cc))
      out += fmt::format("  toolkits that compile for it: CUDA {} to {}\n", c->first_cuda.str(),
                         c->last_cuda ? c->last_cuda->str() : "the newest");
    if (const auto d = kb.min_driver_for_cc(g->cc)) out += fmt::format("  oldest driver that runs it: {}\n", d->str());
    if (const auto* a = kb.architecture_of(g->cc); a && a->last_driver_branch)
      out += fmt::format("  newest driver branch that supports it: R{}\n", *a->last_driver_branch);
    if (!g->status.empty()) out += "  status: " + visible(g->status) + "\n";
    out += "  source: " + visible(g->source) + "\n";
  }
  return out;
}

std::string kb_driver(const kb::KnowledgeBase& kb, const util::Version& d) {
  std::string out = fmt::format("driver {}\n", d.str());
  const kb::DriverBranch* branch = nullptr;
  for (const auto& b : kb.driver_branches())
    if (b.branch == d.major()) branch = &b;
  if (kb.driver_beyond_kb(d))
    out += fmt::format(
        "  newer than every branch in the knowledge base (compiled {}; newest R{}): it supports at least CUDA {} "
        "natively; what else it supports is not known\n",
        kb.date().empty() ? "undated" : visible(kb.date()), kb.newest_branch()->branch,
        kb.newest_branch()->max_cuda.str());
  else if (const auto m = kb.max_cuda_for_driver(d))
    out += fmt::format("  newest CUDA supported natively: {}\n", m->str());
  if (branch) {
    if (!branch->kind.empty()) out += fmt::format("  R{}: {}\n", branch->branch, visible(branch->kind));
    if (!branch->status.empty()) out += "  status: " + visible(branch->status) + "\n";
    if (!branch->note.empty()) out += "  " + wrap(visible(branch->note), 94, "  ") + "\n";
    out += "  source: " + visible(branch->source) + "\n";
  }
  for (const auto& m : kb.cuda_majors())
    if (d >= m.minor_compat_floor)
      out += fmt::format("  any CUDA {}.x runtime through minor-version compatibility (floor {})\n", m.major,
                         m.minor_compat_floor.str());
  std::string cannot;
  for (const auto& cc : kb.ccs_not_run_by(d)) cannot += (cannot.empty() ? "" : ", ") + plan::sm(cc);
  if (!cannot.empty()) out += "  cannot run GPUs of " + cannot + "\n";
  return out;
}

std::string kb_toolkit(const kb::KnowledgeBase& kb, const util::Version& v) {
  std::string out;
  for (const auto& t : kb.toolkit_releases())
    if (t.cuda.major() == v.major() && t.cuda.minor() == v.minor()) {
      out += fmt::format("{}: driver ≥ {} (Linux{}){}{}\n", visible(t.release),
                         t.min_driver_exact ? t.min_driver_linux.str() : fmt::format("R{}", t.min_driver_linux.major()),
                         t.min_driver_exact ? "" : "; the exact minimum is not established",
                         t.min_driver_windows.empty() ? "" : ", ≥ " + visible(t.min_driver_windows) + " (Windows)",
                         t.status.empty() ? "" : " [" + visible(t.status) + "]");
      if (!t.note.empty()) out += "  " + wrap(visible(t.note), 94, "  ") + "\n";
    }
  if (out.empty()) return out;
  if (const auto f = kb.minor_compat_floor(v.major()))
    out += fmt::format("  through minor-version compatibility: driver ≥ {}\n", f->str());
  std::vector<util::Version> ccs;
  for (const auto& a : kb.architectures())
    for (const auto& c : a.ccs)
      if (kb.toolkit_targets_cc(v, c.cc)) ccs.push_back(c.cc);
  std::sort(ccs.begin(), ccs.end());
  std::string archs;
  for (const auto& cc : ccs) archs += (archs.empty() ? "" : " ") + plan::sm(cc);
  out += "  compiles for: " + archs + "\n";
  return out;
}

std::string kb_errors(const std::vector<const kb::ReturnCode*>& hits) {
  std::string out;
  for (const auto* e : hits) {
    out += fmt::format("{} {} {}\n",
                       e->api == "nvml"     ? "NVML"
                       : e->api == "driver" ? "driver API"
                                            : "runtime API",
                       e->code, visible(e->name));
    if (!e->message.empty()) out += "  message: \"" + visible(e->message) + "\"\n";
    out += "  " + wrap(visible(e->meaning), 94, "  ") + "\n";
    if (e->causes.size() == 1) out += "  usual cause: " + wrap(visible(e->causes.front()), 80, "    ") + "\n";
    if (e->causes.size() > 1) {
      out += fmt::format("  {} causes, told apart by the checks in each:\n", e->causes.size());
      for (std::size_t i = 0; i < e->causes.size(); ++i)
        out += fmt::format("  {}. {}\n", i + 1, wrap(visible(e->causes[i]), 90, "     "));
    }
    if (!e->status.empty()) out += "  status: " + visible(e->status) + "\n";
    out += "  source: " + visible(e->source) + "\n";
  }
  return out;
}

}  // namespace cudoctor::render
