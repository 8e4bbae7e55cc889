#pragma once
// Rules: pure functions of (snapshot, knowledge base) -> findings. No I/O.
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::rules {

std::vector<Finding> host_rules(const snapshot::Snapshot& snap);
std::vector<Finding> driver_rules(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);

std::vector<Finding> toolkit_rules(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);
std::vector<Finding> framework_rules(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);
std::vector<Finding> runtime_rules(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);

// Every family in layer order.
std::vector<Finding> run_all(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb);

}  // namespace cudoctor::rules
