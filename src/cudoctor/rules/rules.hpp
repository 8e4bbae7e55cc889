#pragma once
// Rules: pure functions of (snapshot, knowledge base) -> findings. No I/O.
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules {

// Each family judges one layer (host_rules L0 and unreadable facts, driver_rules L1,
// toolkit_rules L2, framework_rules L3, runtime_rules L4 and L5) from the machine's derived
// view (m.snap is the snapshot itself) and the knowledge base.
std::vector<Finding> host_rules(const view::Machine& m);
std::vector<Finding> driver_rules(const view::Machine& m, const kb::KnowledgeBase& kb);
std::vector<Finding> toolkit_rules(const view::Machine& m, const kb::KnowledgeBase& kb);
std::vector<Finding> framework_rules(const view::Machine& m, const kb::KnowledgeBase& kb);
std::vector<Finding> runtime_rules(const view::Machine& m, const kb::KnowledgeBase& kb);
// What the knowledge base does not know here (info findings of L1-L3, with its date).
std::vector<Finding> kb_coverage_rules(const view::Machine& m, const kb::KnowledgeBase& kb);

// Tuning (L1 module parameters and persistence, L5 the rest): rules/tune.hpp.
std::vector<Finding> tune_rules(const view::Machine& m, const kb::KnowledgeBase& kb);

// Every family in layer order.
std::vector<Finding> run_all(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);

}  // namespace cudoctor::rules
