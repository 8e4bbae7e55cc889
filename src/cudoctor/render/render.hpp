#pragma once
// Renderers: they read a report and print it; they decide nothing.
#include <nlohmann/json.hpp>
#include <string>

#include "cudoctor/elf/fatbin.hpp"
#include "cudoctor/explain/explain.hpp"
#include "cudoctor/ld/model.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/plan/shell_env.hpp"
#include "cudoctor/render/json_writer.hpp"
#include "cudoctor/report/report.hpp"

namespace cudoctor::render {

struct Options {
  bool color = false;    // ANSI colour; the caller decides (terminal, NO_COLOR, --color)
  bool verbose = false;  // evidence under every line, details of info lines
  std::string tool_version;
  std::size_t width = 80;    // the columns prose and evidence are wrapped at
  bool redacted = false;     // --redact is applied to the output (markdown then does not suggest it)
  std::string command_line;  // what was run, for a report read elsewhere (markdown)
  std::string generated;     // when: "2026-12-02 21:10 UTC"
  double run_seconds = -1;   // how long the check took; -1 unknown
};

std::string text(const report::Report& r, const Options& o);
std::string json(const report::Report& r, const Options& o);
// The report as JSON data (what json() writes).
nlohmann::json report_json(const report::Report& r);
std::string markdown(const report::Report& r, const Options& o);
// Prometheus' text exposition format for node_exporter's textfile collector (docs/fleet.md).
std::string prometheus(const report::Report& r, const Options& o);
// `cudoctor tune`: the tuning findings (every one, with what it does and where it is set).
std::string tune_text(const report::Report& r, const Options& o);
std::string tune_json(const report::Report& r);

// `cudoctor plan`: one line per release (its best build), or every build with all.
std::string plan_text(const plan::Plan& p, const Options& o, bool all);
std::string plan_json(const plan::Plan& p);

// `cudoctor ldd`: the tree with the rule that found each library; --why for one library.
std::string ldd_text(const ld::Tree& t, const Options& o);
std::string ldd_why(const ld::Tree& t, const std::string& lib);
// One tree as a JSON object, written where w is (ldd --json writes an array of them).
void ldd_json(JsonWriter& w, const ld::Tree& t);
// `cudoctor archs`; with --cc, also whether the file runs on that compute capability.
struct RunsOn {
  util::Version cc;
  compat::Verdict verdict;  // how the driver would run the file's kernels there, none when it cannot
};
std::string archs_text(const std::string& file, const std::optional<elf::Fatbin>& fb,
                       const std::optional<RunsOn>& runs_on = std::nullopt);
nlohmann::json archs_json(const std::string& file, const std::optional<elf::Fatbin>& fb,
                          const std::optional<RunsOn>& runs_on = std::nullopt);

// `cudoctor toolkits`: each toolkit, then what selects one ((what, which) pairs).
std::string toolkits_text(const snapshot::ToolkitFacts& f,
                          const std::vector<std::pair<std::string, std::string>>& selected);
// `cudoctor env`: lines to eval in bash, zsh or fish; or a file for direnv (bash).
std::string env_script(const plan::ShellEnv& e, const std::string& shell, const std::string& comment);
std::string env_file(const plan::ShellEnv& e, const std::string& comment);
// existing (an .envrc's text, "" for a new file) with cudoctor's managed block replaced by
// block, or block appended when it has none: every other line is kept as it was.
std::string with_env_block(const std::string& existing, const std::string& block);

// `cudoctor kb`.
std::string kb_summary(const kb::KnowledgeBase& kb, bool verbose);
std::string kb_gpu(const kb::KnowledgeBase& kb, const std::vector<const kb::GpuModel*>& hits);
std::string kb_driver(const kb::KnowledgeBase& kb, const util::Version& driver);
std::string kb_toolkit(const kb::KnowledgeBase& kb, const util::Version& cuda);
std::string kb_errors(const std::vector<const kb::ReturnCode*>& hits);

// `cudoctor explain`: the ranked causes of a log, their lines, the machine's word and the fix.
std::string explain_text(const explain::Explanation& ex, const Options& o);
nlohmann::json explain_json(const explain::Explanation& ex);
std::string explain_markdown(const explain::Explanation& ex);

// JSON as every command writes it: indented by 2, UTF-8 kept, bytes that are not UTF-8
// replaced by U+FFFD instead of throwing, and DEL, C1 controls, the line separators and
// the bidirectional overrides written as \u escapes so no raw control reaches a terminal.
// indent -1: on one line.
std::string json_text(const nlohmann::json& j, int indent = 2);

// What --redact hides, gathered by the host probe: user names, home directories, host names.
struct Secrets {
  std::vector<std::string> names;  // replaced by <user> on punctuation and path boundaries
  std::vector<std::string> homes;  // replaced by <home> where a path component ends
  std::vector<std::string> hosts;  // replaced by <host> on punctuation boundaries, any case
};
Secrets secrets_of(const snapshot::HostFacts& h);
// Replaces every secret in rendered output (text, markdown or JSON) with its placeholder.
// A name or host matches only where no ASCII letter or digit is next to it, so "train-alice"
// and "alice.cfg" lose "alice" but "malice" keeps it.
std::string redact(std::string_view rendered, const Secrets& s);
std::string redact(const std::string& rendered, const report::Report& r);

// Wraps text to width columns; every line after the first is indented by indent. Columns are
// counted in code points, and ANSI colour sequences take none.
std::string wrap(const std::string& text, std::size_t width, const std::string& indent);
// Text for a terminal whose character set is not UTF-8: the report's symbols as ASCII
// (✓ +, ✗ x, · -, ← <-, → ->, ≥ >=, … ...), any other non-ASCII character as '?'.
std::string ascii_only(std::string_view text);

}  // namespace cudoctor::render
