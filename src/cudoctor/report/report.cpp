#include "cudoctor/report/report.hpp"

#include <fmt/format.h>

#include "cudoctor/report/causes.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/rules.hpp"

namespace cudoctor::report {
namespace {

using rules::Finding;
using rules::Layer;
using rules::Severity;

bool problem(const Finding& f) {
  return f.severity == Severity::warn || f.severity == Severity::error;
}

// "L1" -> Layer::L1; nullopt for a finding id.
std::optional<Layer> layer_pattern(std::string_view s) {
  if (s.size() == 2 && s[0] == 'L' && s[1] >= '0' && s[1] <= '5') return static_cast<Layer>(s[1] - '0');
  return std::nullopt;
}

bool effect_matches(std::string_view effect, const Finding& f) {
  if (const auto l = layer_pattern(effect)) return problem(f) && f.layer == *l;
  return effect == f.id && f.severity != Severity::ok;
}

class Causes {
 public:
  explicit Causes(std::vector<Finding>& fs) : m_fs(fs) {}

  // Layer by layer from the bottom, so that a layer's root is known before the layers above
  // refer to it.
  void decide() {
    for (int l = 0; l <= static_cast<int>(Layer::L5); ++l) {
      const auto layer = static_cast<Layer>(l);
      for (auto& f : m_fs)
        if (f.layer == layer) f.follows_from = cause_of(f, /*own_layer=*/false);
      m_roots[l] = root(layer);
      for (auto& f : m_fs)
        if (f.layer == layer && f.follows_from.empty()) f.follows_from = cause_of(f, /*own_layer=*/true);
    }
  }
  const Finding* root_of(Layer l) const { return m_roots[static_cast<int>(l)]; }

 private:
  // The most causal error of a layer: the first that follows from nothing, and is not one that
  // only ever follows from its own layer's other errors (NVML after the module, say).
  const Finding* root(Layer layer) const {
    const Finding* fallback = nullptr;
    for (const auto& f : m_fs) {
      if (f.layer != layer || f.severity != Severity::error || !f.follows_from.empty()) continue;
      if (!fallback) fallback = &f;
      bool follower = false;
      for (const auto& row : causal_order())
        follower = follower || (row.effect.text() == f.id && layer_pattern(row.cause.text()) == layer);
      if (!follower) return &f;
    }
    if (fallback) return fallback;
    for (const auto& f : m_fs)
      if (f.layer == layer && f.severity == Severity::error) return &f;
    return nullptr;
  }

  std::string cause_of(const Finding& f, bool own_layer) const {
    for (const auto& row : causal_order()) {
      if (!effect_matches(row.effect.text(), f)) continue;
      if (const auto l = layer_pattern(row.cause.text())) {
        if ((*l == f.layer) != own_layer || *l > f.layer) continue;
        const auto* r = m_roots[static_cast<int>(*l)];
        if (*l == f.layer) r = root(*l);
        if (r && r != &f) return r->id;
        continue;
      }
      for (const auto& c : m_fs)
        if (&c != &f && c.id == row.cause.text() && problem(c) && c.layer <= f.layer) return c.id;
    }
    return "";
  }

  std::vector<Finding>& m_fs;
  const Finding* m_roots[6] = {};
};

}  // namespace

Verdict judge(const std::vector<rules::Finding>& findings) {
  Verdict v;
  std::optional<Layer> lowest;
  for (const auto& f : findings)
    if (f.severity == Severity::error && (!lowest || f.layer < *lowest)) lowest = f.layer;
  if (!lowest) {
    std::size_t warns = 0;
    for (const auto& f : findings) warns += f.severity == Severity::warn;
    v.summary = warns == 0 ? "No problem found in the layers checked."
                           : fmt::format("No break found; {} warning{} to read.", warns, warns == 1 ? "" : "s");
    return v;
  }
  // The break point: the most causal error of the lowest broken layer.
  std::vector<Finding> copy = findings;
  Causes causes(copy);
  causes.decide();
  const auto* first = causes.root_of(*lowest);
  v.healthy = false;
  v.break_layer = first->layer;
  v.break_finding = first->id;
  v.summary = fmt::format("Broken at {} {}: {}.", rules::to_string(first->layer), rules::layer_name(first->layer),
                          first->title);
  return v;
}

void decide_causes(std::vector<rules::Finding>& findings) {
  Causes c(findings);
  c.decide();
  // A consequence's own fix would dead-end: fix its cause first. What only looks stays.
  for (auto& f : findings) {
    if (f.follows_from.empty() || !problem(f)) continue;
    const Finding* cause = nullptr;
    for (const auto& c2 : findings)
      if (c2.id == f.follows_from) {
        cause = &c2;
        break;
      }
    // Within a layer both fixes are shown in order; a warning below does not stop this fix working.
    if (!cause || cause->layer == f.layer || cause->severity != Severity::error) continue;
    f.fix.text = fmt::format("Fix {} first: {}.", rules::to_string(cause->layer), cause->title);
    f.fix.commands.clear();
  }
}

Report build(snapshot::Snapshot snap, const kb::KnowledgeBase& kb, Tuning tuning) {
  Report r;
  // Tuning findings take no part in cause and consequence: a setting neither breaks the
  // chain nor follows from a break.
  std::vector<Finding> tuned;
  for (auto& f : rules::run_all(snap, kb)) {
    if (!rules::is_tuning(f.id))
      r.findings.push_back(std::move(f));
    else if (tuning == Tuning::all || problem(f))
      tuned.push_back(std::move(f));
  }
  decide_causes(r.findings);
  r.findings.insert(r.findings.end(), tuned.begin(), tuned.end());
  r.verdict = judge(r.findings);
  r.snapshot = std::move(snap);
  r.kb_date = kb.date();
  r.checked_layers = {rules::Layer::L0, rules::Layer::L1, rules::Layer::L2, rules::Layer::L3};
  if (r.snapshot.runtime.ran) {
    r.checked_layers.push_back(rules::Layer::L4);
    r.checked_layers.push_back(rules::Layer::L5);
  } else if (!r.snapshot.runtime.not_run_reason.empty()) {
    r.checked_layers.push_back(rules::Layer::L4);  // where the report says why it was not run
  }
  return r;
}

bool is_problem(const rules::Finding& f) {
  return problem(f);
}

std::vector<const rules::Finding*> problems(const Report& r) {
  std::vector<const rules::Finding*> out;
  for (const auto& f : r.findings)
    if (problem(f)) out.push_back(&f);
  return out;
}

std::size_t tuning_warnings(const Report& r) {
  std::size_t n = 0;
  for (const auto* f : problems(r)) n += rules::is_tuning(f->id);
  return n;
}

int exit_code(const Report& r) {
  return r.verdict.healthy ? 0 : 1;
}

}  // namespace cudoctor::report
