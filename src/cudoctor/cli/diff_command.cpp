// `cudoctor diff A.json B.json`: 0 nothing that matters differs, 1 something does, 2 a report
// cannot be read.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/cli/reports.hpp"
#include "cudoctor/fleet/diff.hpp"
#include "cudoctor/render/fleet_render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

void add_diff_options(CLI::App& app, Options& o) {
  app.add_option("reports", o.diff.files, "Two reports written by cudoctor --json")->type_name("A.json B.json");
}

int run_diff(const Options& all) {
  const auto& o = all.common;
  const auto& files = all.diff.files;
  if (o.redact) {
    fmt::print(stderr,
               "cudoctor diff: --redact does not apply: the reports come from other machines, whose names, users "
               "and homes this one does not know; redact each where it is written (cudoctor check --json "
               "--redact)\n");
    return 2;
  }
  if (files.size() != 2) {
    fmt::print(stderr,
               "cudoctor diff: give two reports, e.g. cudoctor diff good.json bad.json (each written by "
               "cudoctor --json)\n");
    return 2;
  }
  const auto sys = sys::make_root_sys("/");
  const auto a = read_report_file(*sys, files[0]);
  const auto b = read_report_file(*sys, files[1]);
  for (int i = 0; i < 2; ++i) {
    const auto& r = i == 0 ? a : b;
    if (!r) fmt::print(stderr, "cudoctor diff: {}: {}\n", util::visible(files[i]), util::visible(r.error()));
  }
  if (!a || !b) return 2;
  const auto d = fleet::diff(*a, *b);
  const int rc = d.changes.empty() && d.problems.empty() ? 0 : 1;
  const auto format = o.effective_format();
  std::string out;
  if (format == "json")
    out = render::json_text(render::diff_json(*a, *b, d));
  else if (format == "markdown")
    out = render::diff_markdown(*a, *b, d);
  else
    out = render::diff_text(*a, *b, d, render_options(o));
  return emit(finished(o, std::move(out)), rc);
}

}  // namespace cudoctor::cli
