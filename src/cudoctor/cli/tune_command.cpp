// `cudoctor tune`: every setting that changes speed or correctness, where each is set, what it
// really does, and a verdict with its source. 0 when nothing needs changing, 1 when a setting
// costs speed or is not what it looks like, 2 when the root cannot be used.
#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"

namespace cudoctor::cli {

int run_tune(const Options& all) {
  const auto& o = all.common;
  auto snap = gather_snapshot(o, CUDOCTOR_VERSION);
  if (!snap) return 2;
  const auto rep = report::build(std::move(*snap), kb::builtin(), report::Tuning::all);
  const auto ropts = render_options(o);
  const auto format = o.effective_format();
  std::string out = format == "json" ? render::tune_json(rep) : render::tune_text(rep, ropts);
  return emit(finished(o, rep, std::move(out)), report::tuning_warnings(rep) > 0 ? 1 : 0);
}

}  // namespace cudoctor::cli
