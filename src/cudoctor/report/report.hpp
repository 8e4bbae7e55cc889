#pragma once
// The report: the snapshot, the findings, and the verdict with the break point. The report,
// not the rules, decides which finding follows from which (causes.hpp).
#include <optional>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::report {

struct Verdict {
  bool healthy = true;
  std::optional<rules::Layer> break_layer;
  std::string break_finding;  // id of the finding that names the break
  std::string summary;        // one sentence
};

struct Report {
  snapshot::Snapshot snapshot;
  std::vector<rules::Finding> findings;
  Verdict verdict;
  std::vector<rules::Layer> checked_layers;  // the layers this version inspects
  std::string kb_date;                       // the knowledge base the findings were judged by
};

// Which tuning findings a report keeps: check keeps the warnings, `cudoctor tune` every one.
enum class Tuning { problems, all };
Report build(snapshot::Snapshot snap, const kb::KnowledgeBase& kb, Tuning tuning = Tuning::problems);
// The verdict for a list of findings: the break is the most causal error (causes.hpp) of the
// lowest layer that has an error.
Verdict judge(const std::vector<rules::Finding>& findings);
// Sets each finding's follows_from from the causal order; a consequence in a layer above its
// cause gets "Fix <layer> first" instead of commands that would dead-end.
void decide_causes(std::vector<rules::Finding>& findings);
// A problem is an error or a warning, a tuning one included; the rest (ok, info) is not.
bool is_problem(const rules::Finding& f);
// The problems, in report order: what the text report's summary counts and markdown lists.
std::vector<const rules::Finding*> problems(const Report& r);
// The tuning warnings: settings to change (`cudoctor tune` exits 1 when there are any).
std::size_t tuning_warnings(const Report& r);
// 0 healthy, 1 broken: the command-line contract's exit codes.
int exit_code(const Report& r);

}  // namespace cudoctor::report
