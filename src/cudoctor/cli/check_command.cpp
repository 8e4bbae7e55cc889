// `cudoctor check`: gathers, judges, renders; 0 healthy, 1 broken, 2 when the root cannot be
// used.
#include <chrono>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/html.hpp"
#include "cudoctor/render/nfd.hpp"
#include "cudoctor/render/npd.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"

namespace cudoctor::cli {

int run_check(const Options& all) {
  const auto& o = all.common;
  const auto started = std::chrono::steady_clock::now();
  auto snap = gather_snapshot(o, CUDOCTOR_VERSION);
  if (!snap) return 2;
  const auto rep = report::build(std::move(*snap), kb::builtin());

  auto ropts = render_options(o);
  ropts.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto format = o.effective_format();
  std::string out;
  if (format == "json")
    out = render::json(rep, ropts);
  else if (format == "npd")
    out = render::npd_line(rep);
  else if (format == "nfd")
    out = render::nfd_labels(rep, nfd_options(o));
  else if (format == "html")
    out = render::html(rep, ropts);
  else if (format == "prometheus")
    out = render::prometheus(rep, ropts);
  else if (format == "markdown")
    out = render::markdown(rep, ropts);
  else
    out = render::text(rep, ropts);
  return emit(finished(o, rep, std::move(out)), report::exit_code(rep));
}

}  // namespace cudoctor::cli
