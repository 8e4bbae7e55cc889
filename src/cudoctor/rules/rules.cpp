#include "cudoctor/rules/rules.hpp"

#include <algorithm>

namespace cudoctor::rules {

std::vector<Finding> run_all(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb) {
  const auto m = view::derive(snap, kb);
  auto out = host_rules(m);
  auto driver = driver_rules(m, kb);
  out.insert(out.end(), driver.begin(), driver.end());
  auto toolkit = toolkit_rules(m, kb);
  out.insert(out.end(), toolkit.begin(), toolkit.end());
  auto frameworks = framework_rules(m, kb);
  out.insert(out.end(), frameworks.begin(), frameworks.end());
  auto coverage = kb_coverage_rules(m, kb);
  out.insert(out.end(), coverage.begin(), coverage.end());
  auto runtime = runtime_rules(m, kb);
  out.insert(out.end(), runtime.begin(), runtime.end());
  auto tuning = tune_rules(m, kb);
  out.insert(out.end(), tuning.begin(), tuning.end());
  // Layer order, keeping each family's causal order within a layer.
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.layer < b.layer; });
  return out;
}

}  // namespace cudoctor::rules
