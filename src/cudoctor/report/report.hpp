#pragma once
// The report: the snapshot, the findings, and the verdict with the break point: the lowest
// layer that has an error. Everything above it is reported but follows from it.
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
};

Report build(snapshot::Snapshot snap, const kb::KnowledgeBase& kb);
// The verdict for a list of findings.
Verdict judge(const std::vector<rules::Finding>& findings);
// 0 healthy, 1 broken: the command-line contract's exit codes.
int exit_code(const Report& r);

}  // namespace cudoctor::report
