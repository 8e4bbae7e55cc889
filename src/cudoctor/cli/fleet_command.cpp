// `cudoctor fleet FILE…|DIR…`: 0 every node healthy, 1 a node broken or a file skipped, 2 no
// report could be read.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
#include <thread>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/cli/reports.hpp"
#include "cudoctor/fleet/fleet.hpp"
#include "cudoctor/render/fleet_render.hpp"
#include "cudoctor/render/html.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

void add_fleet_options(CLI::App& app, Options& o) {
  app.add_option("reports", o.fleet.inputs, "Reports written by cudoctor --json, or directories of them (*.json)")
      ->type_name("FILE|DIR");
}

int run_fleet(const Options& all) {
  const auto& o = all.common;
  if (o.redact) {
    fmt::print(stderr,
               "cudoctor fleet: --redact does not apply: the reports come from other machines, whose names, users "
               "and homes this one does not know; redact each where it is written (cudoctor check --json "
               "--redact)\n");
    return 2;
  }
  if (all.fleet.inputs.empty()) {
    fmt::print(stderr,
               "cudoctor fleet: give report files or a directory of them, e.g. cudoctor fleet reports/ "
               "(each written by cudoctor --json)\n");
    return 2;
  }
  const auto sys = sys::make_root_sys("/");
  fleet::Aggregate agg;
  std::vector<std::string> files;
  for (const auto& given : all.fleet.inputs) {
    auto named = report_files(*sys, given);
    if (!named)
      agg.skip(given, named.error());
    else
      files.insert(files.end(), named->begin(), named->end());
  }
  // Read and digested a batch at a time, on every core; added in the order given, so the
  // result does not depend on the threads. A batch's reports are all that is held at once.
  const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  constexpr std::size_t k_batch = 256;
  std::vector<std::optional<util::Result<fleet::Digest>>> read(k_batch);
  for (std::size_t start = 0; start < files.size(); start += k_batch) {
    const auto n = std::min(k_batch, files.size() - start);
    const auto work = [&](unsigned w) {
      for (std::size_t i = w; i < n; i += workers) read[i] = read_report_file(*sys, files[start + i]);
    };
    std::vector<std::thread> threads;
    for (unsigned w = 1; w < workers && w < n; ++w) threads.emplace_back(work, w);
    work(0);
    for (auto& t : threads) t.join();
    for (std::size_t i = 0; i < n; ++i) {
      if (*read[i])
        agg.add(std::move(*read[i]).value());
      else
        agg.skip(files[start + i], read[i]->error());
      read[i].reset();
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
  else if (format == "html")
    out = render::fleet_html(r, render_options(o));
  else
    out = render::fleet_text(r, render_options(o));
  return emit(finished(o, std::move(out)), rc);
}

}  // namespace cudoctor::cli
