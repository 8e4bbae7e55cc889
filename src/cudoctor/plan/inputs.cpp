#include "cudoctor/plan/plan.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::plan {

Inputs inputs_from_snapshot(const snapshot::Snapshot& snap, const kb::KnowledgeBase& kb) {
  Inputs in;
  const auto m = view::derive(snap, kb);
  if (!m.gpus.empty()) {
    in.cc = m.gpus.front().cc;
    in.gpu = m.gpus.front().name;
    in.gpu_source = m.gpus.front().source;
  }
  in.driver = m.driver.version;
  in.driver_source = m.driver.source;
  return in;
}

}  // namespace cudoctor::plan
