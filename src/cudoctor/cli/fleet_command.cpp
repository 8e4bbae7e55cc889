// `cudoctor fleet FILE…|DIR…`: 0 every node healthy, 1 a node broken or a file skipped, 2 no
// report could be read.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/cli/reports.hpp"
#include "cudoctor/fleet/fleet.hpp"
#include "cudoctor/render/fleet_render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

void add_fleet_options(CLI::App& app, Options& o) {
  app.add_option("reports", o.fleet.inputs, "Reports written by cudoctor --json, or directories of them (*.json)")
      ->type_name("FILE|DIR");
}

int run_fleet(const Options& all) {
  const auto& o = all.common;
  if (all.fleet.inputs.empty()) {
    fmt::print(stderr,
               "cudoctor fleet: give report files or a directory of them, e.g. cudoctor fleet reports/ "
               "(each written by cudoctor --json)\n");
    return 2;
  }
  const auto sys = sys::make_root_sys("/");
  fleet::Aggregate agg;
  for (const auto& given : all.fleet.inputs) {
    const auto files = report_files(*sys, given);
    if (!files) {
      agg.skip(given, files.error());
      continue;
    }
    // One report in memory at a time: read, digested, its text dropped.
    for (const auto& f : *files) {
      auto d = read_report_file(*sys, f);
      if (d)
        agg.add(std::move(d).value());
      else
        agg.skip(f, d.error());
    }
  }
  const auto r = std::move(agg).finish();
  if (r.nodes.empty()) {
    fmt::print(stderr, "cudoctor fleet: no report could be read\n");
    for (const auto& s : r.skipped) fmt::print(stderr, "  {}: {}\n", util::visible(s.file), util::visible(s.reason));
    return 2;
  }
  const int rc = r.broken == 0 && r.skipped.empty() ? 0 : 1;
  const auto format = o.effective_format();
  std::string out;
  if (format == "json")
    out = render::json_text(render::fleet_json(r));
  else if (format == "markdown")
    out = render::fleet_markdown(r);
  else
    out = render::fleet_text(r, render_options(o));
  return emit(finished(o, std::move(out)), rc);
}

}  // namespace cudoctor::cli
