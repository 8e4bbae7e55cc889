#include "cudoctor/report/report.hpp"

#include <fmt/format.h>

#include "cudoctor/rules/rules.hpp"

namespace cudoctor::report {

Verdict judge(const std::vector<rules::Finding>& findings) {
  Verdict v;
  const rules::Finding* first = nullptr;
  for (const auto& f : findings)
    if (f.severity == rules::Severity::error && (!first || f.layer < first->layer)) first = &f;
  if (!first) {
    std::size_t warns = 0;
    for (const auto& f : findings) warns += f.severity == rules::Severity::warn;
    v.summary = warns == 0 ? "No problem found in the layers checked."
                           : fmt::format("No break found; {} warning{} to read.", warns, warns == 1 ? "" : "s");
    return v;
  }
  v.healthy = false;
  v.break_layer = first->layer;
  v.break_finding = first->id;
  v.summary = fmt::format("Broken at {} {}: {}.", rules::to_string(first->layer), rules::layer_name(first->layer),
                          first->title);
  return v;
}

Report build(snapshot::Snapshot snap, const kb::KnowledgeBase& kb) {
  Report r;
  r.findings = rules::run_all(snap, kb);
  r.verdict = judge(r.findings);
  r.snapshot = std::move(snap);
  r.checked_layers = {rules::Layer::L0, rules::Layer::L1, rules::Layer::L2, rules::Layer::L3};
  if (r.snapshot.runtime.ran) {
    r.checked_layers.push_back(rules::Layer::L4);
    r.checked_layers.push_back(rules::Layer::L5);
  } else if (!r.snapshot.runtime.not_run_reason.empty()) {
    r.checked_layers.push_back(rules::Layer::L4);  // where the report says why it was not run
  }
  return r;
}

int exit_code(const Report& r) { return r.verdict.healthy ? 0 : 1; }

}  // namespace cudoctor::report
