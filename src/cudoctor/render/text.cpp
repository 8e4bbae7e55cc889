#include <fmt/format.h>

#include "cudoctor/render/render.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {
namespace {

using rules::Finding;
using rules::Layer;
using rules::Severity;
using util::visible;

struct Paint {
  bool on;
  std::string operator()(const char* code, const std::string& s) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
  }
};

const char* symbol(Severity s) {
  switch (s) {
    case Severity::ok:
      return "✓";
    case Severity::info:
      return "·";
    case Severity::warn:
      return "!";
    case Severity::error:
      return "✗";
  }
  return "?";
}

const char* colour(Severity s) {
  switch (s) {
    case Severity::ok:
      return "32";
    case Severity::info:
      return "36";
    case Severity::warn:
      return "33";
    case Severity::error:
      return "31";
  }
  return "0";
}

void finding(std::string& out, const Finding& f, const report::Report& r, const Options& o, const Paint& paint) {
  // Every string of a finding may hold what the machine wrote (a GPU name, a path): escaped
  // before it is wrapped and painted, so it cannot add a line or move the cursor.
  const bool problem = report::is_problem(f);
  std::string title = visible(f.title);
  if (!f.follows_from.empty()) {
    const Finding* cause = nullptr;
    for (const auto& c : r.findings)
      if (c.id == f.follows_from && !cause) cause = &c;
    title += cause && cause->layer != f.layer
                 ? fmt::format(" (follows from the {} {})", rules::to_string(cause->layer),
                               f.follows_from == r.verdict.break_finding ? "break" : f.follows_from)
                 : fmt::format(" (follows from {})", f.follows_from);
  }
  out += fmt::format("  {} {}\n", paint(colour(f.severity), symbol(f.severity)),
                     wrap(problem ? paint("1", title) : title, o.width - 4, "    "));
  const std::string pad = "      ";
  if (!f.detail.empty() && (problem || o.verbose))
    out += pad + wrap(visible(f.detail), o.width - pad.size(), pad) + "\n";
  if (problem || o.verbose)
    for (const auto& e : f.evidence)
      out += pad + paint("2", "· " + wrap(visible(e), o.width - pad.size() - 2, pad + "  ")) + "\n";
  if (!f.fix.text.empty() || !f.fix.commands.empty()) {
    if (!f.fix.text.empty())
      out += pad + paint("1", "fix: ") + wrap(visible(f.fix.text), o.width - pad.size() - 5, pad + "     ") + "\n";
    for (const auto& c : f.fix.commands) out += pad + "  $ " + visible(c) + "\n";
  }
  for (const auto& c : f.fix.checks) out += pad + paint("1", "check: ") + "$ " + visible(c) + "\n";
}

// The settings judged (tune-… findings), under their own heading after the layers.
void tuning(std::string& out, const report::Report& r, const Options& o, const Paint& paint) {
  bool any = false;
  for (const auto& f : r.findings) {
    if (!rules::is_tuning(f.id)) continue;
    if (!any) out += "\n" + paint("1", "Tuning") + "\n";
    any = true;
    finding(out, f, r, o, paint);
  }
}

// Which Python environments L3 looked at: a count, and under -v each one.
void python_envs(std::string& out, const report::Report& r, const Options& o, const Paint& paint) {
  const auto& envs = r.snapshot.python.envs;
  if (envs.empty()) return;
  out += fmt::format("  {} {} Python environment{} inspected{}\n", paint("36", "·"), envs.size(),
                     envs.size() == 1 ? "" : "s", o.verbose ? ":" : " (-v lists them)");
  if (!o.verbose) return;
  for (const auto& e : envs) {
    std::string frameworks;
    for (const auto& f : e.frameworks)
      frameworks += (frameworks.empty() ? "" : ", ") + visible(f.name) + " " + visible(f.version);
    out += "      " +
           paint("2", "· " + wrap(fmt::format("{} ({}){}", visible(e.prefix), visible(e.kind),
                                              frameworks.empty() ? "" : ": " + frameworks),
                                  o.width - 8, "        ")) +
           "\n";
  }
}

// One screen's worth at the end: how many problems, and each one's title, in report order.
void summary(std::string& out, const report::Report& r, const Options& o, const Paint& paint) {
  std::size_t errors = 0, warnings = 0;
  std::string lines;
  for (const auto* f : report::problems(r)) {
    (f->severity == Severity::error ? errors : warnings)++;
    const auto where = rules::is_tuning(f->id) ? std::string("tuning") : std::string(rules::to_string(f->layer));
    lines += fmt::format("  {} {} {}\n", paint(colour(f->severity), symbol(f->severity)), where,
                         wrap(visible(f->title), o.width - 5 - where.size(), std::string(5 + where.size(), ' ')));
  }
  if (errors + warnings == 0) return;
  const auto n = errors + warnings;
  std::string counts;
  if (errors) counts += fmt::format("{} error{}", errors, errors == 1 ? "" : "s");
  if (warnings) counts += fmt::format("{}{} warning{}", errors ? ", " : "", warnings, warnings == 1 ? "" : "s");
  out += paint("1", fmt::format("{} problem{} ({}):", n, n == 1 ? "" : "s", counts)) + "\n" + lines;
}

}  // namespace

std::string tune_text(const report::Report& r, const Options& o) {
  const Paint paint{o.color};
  std::string out =
      paint("1", fmt::format("cudoctor {} tune", o.tool_version)) + " · " +
      (r.snapshot.root == "/" || r.snapshot.root.empty() ? "this machine" : "root " + visible(r.snapshot.root)) + "\n";
  const auto& s = r.snapshot.settings;
  out += paint("2", fmt::format("{} setting{} found in the environment and {} file{} read", s.settings.size(),
                                s.settings.size() == 1 ? "" : "s", s.files_read.size(),
                                s.files_read.size() == 1 ? "" : "s")) +
         "\n";
  for (const auto& u : r.snapshot.unreadable)
    out += paint("33", fmt::format("! could not read {}: {}", visible(u.path), visible(u.reason))) + "\n";
  auto all = o;
  all.verbose = true;  // what each setting does and where it is set is the point here
  tuning(out, r, all, paint);
  const auto warns = report::tuning_warnings(r);
  out += "\n";
  if (warns == 0)
    out += paint("32", "✓ No setting found that costs speed or is not what it looks like.") + "\n";
  else
    out += paint("33;1", fmt::format("! {} setting{} to change.", warns, warns == 1 ? "" : "s")) + "\n";
  return out;
}

std::string text(const report::Report& r, const Options& o) {
  const Paint paint{o.color};
  const auto& h = r.snapshot.host;
  // The header is not wrapped: a --root path is as long as the user made it.
  std::string out = paint("1", fmt::format("cudoctor {}", o.tool_version));
  out += fmt::format(
      " · {} · {}\n", h.hostname.empty() ? "?" : visible(h.hostname),
      r.snapshot.root == "/" || r.snapshot.root.empty() ? "this machine" : "root " + visible(r.snapshot.root));
  for (const auto layer : r.checked_layers) {
    out += "\n";
    std::string head = fmt::format("{} {}", rules::to_string(layer), rules::layer_name(layer));
    if (r.verdict.break_layer == layer) head += "  ← break point";
    out += paint("1", head) + "\n";
    bool any = false;
    for (const auto& f : r.findings)
      if (f.layer == layer && !rules::is_tuning(f.id)) {
        finding(out, f, r, o, paint);
        any = true;
      }
    if (!any) out += "  (nothing to report)\n";
    if (layer == Layer::L3) python_envs(out, r, o, paint);
  }
  tuning(out, r, o, paint);
  std::string skipped;
  for (int l = 0; l <= static_cast<int>(Layer::L5); ++l) {
    const auto layer = static_cast<Layer>(l);
    bool checked = false;
    for (const auto c : r.checked_layers) checked = checked || c == layer;
    if (!checked)
      skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", rules::to_string(layer), rules::layer_name(layer));
  }
  const auto& why_not = r.snapshot.runtime.not_run_reason;
  if (!skipped.empty())
    out += "\n" +
           paint("2", wrap(!r.snapshot.runtime.ran && !why_not.empty()
                               ? fmt::format("{} skipped ({}).", skipped, visible(why_not))
                               : "Not inspected by this version: " + skipped + ".",
                           o.width, "")) +
           "\n";
  out += "\n";
  summary(out, r, o, paint);
  if (r.verdict.healthy)
    out += paint("32", "✓ " + wrap(visible(r.verdict.summary), o.width - 2, "  ")) + "\n";
  else
    out += paint("31;1", "✗ " + wrap(visible(r.verdict.summary), o.width - 2, "  ")) + "\n";
  if (!o.verbose)
    out +=
        paint("2", wrap("Run with -v for the evidence behind every line, --json for all facts.", o.width, "")) + "\n";
  return out;
}

}  // namespace cudoctor::render
