#include <fmt/format.h>

#include "cudoctor/render/markdown_cell.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {
namespace {

const char* mark(rules::Severity s) {
  switch (s) {
    case rules::Severity::ok:
      return "✅";
    case rules::Severity::info:
      return "ℹ️";
    case rules::Severity::warn:
      return "⚠️";
    case rules::Severity::error:
      return "❌";
  }
  return "";
}

using util::visible;

}  // namespace

// visible() takes the newlines out; the '|' is escaped.
std::string markdown_cell(const std::string& s) {
  std::string out;
  for (const char c : visible(s)) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string markdown(const report::Report& r, const Options& o) {
  std::string out = fmt::format("## cudoctor {} report\n\n", o.tool_version);
  if (!o.generated.empty() || !o.command_line.empty())
    out += fmt::format("{}{}\n\n", o.generated.empty() ? "Generated" : "Generated " + o.generated,
                       o.command_line.empty() ? "" : " by `" + visible(o.command_line) + "`");
  if (!o.redacted)
    out +=
        "> Before posting it in public: `cudoctor --format markdown --redact` replaces the host name, the user "
        "names and the home directories.\n\n";
  out += fmt::format("**Verdict:** {} {}\n\n", r.verdict.healthy ? "✅" : "❌", visible(r.verdict.summary));
  out += "| layer | | finding |\n|---|---|---|\n";
  for (const auto& f : r.findings)
    out += fmt::format("| {} {} | {} | {}{} |\n", rules::to_string(f.layer), rules::layer_name(f.layer),
                       mark(f.severity), markdown_cell(f.title),
                       f.follows_from.empty() ? "" : fmt::format(" ↳ follows from `{}`", f.follows_from));
  bool header = false;
  for (const auto* p : report::problems(r)) {
    const auto& f = *p;
    if (!header) out += "\n### Problems\n";
    header = true;
    out +=
        fmt::format("\n#### {} {} (`{}`, {})\n\n", mark(f.severity), visible(f.title), f.id, rules::to_string(f.layer));
    if (!f.follows_from.empty()) out += fmt::format("_Follows from `{}`._\n\n", f.follows_from);
    if (!f.detail.empty()) out += visible(f.detail) + "\n\n";
    if (!f.fix.text.empty()) out += "**Fix:** " + visible(f.fix.text) + "\n\n";
    if (!f.fix.commands.empty()) {
      out += "```sh\n";
      for (const auto& c : f.fix.commands) out += visible(c) + "\n";
      out += "```\n\n";
    }
    if (!f.fix.checks.empty()) {
      out += "**Check:**\n\n```sh\n";
      for (const auto& c : f.fix.checks) out += visible(c) + "\n";
      out += "```\n\n";
    }
    if (!f.evidence.empty()) {
      out += "<details><summary>Evidence</summary>\n\n";
      for (const auto& e : f.evidence) out += "- `" + visible(e) + "`\n";
      out += "\n</details>\n";
    }
  }
  // The facts once each: the nested copies of the contract's top-level lists go, and a report
  // too big for a GitHub issue (65,536 characters) is written compact, or left to an attachment.
  auto facts = report_json(r);
  facts["toolkit"].erase("toolkits");
  facts["python"].erase("envs");
  auto embedded = json_text(facts);
  constexpr std::size_t k_issue_room = 45000;
  if (out.size() + embedded.size() > k_issue_room) embedded = json_text(facts, -1);
  if (out.size() + embedded.size() > k_issue_room)
    out += "\n_All facts: too many to embed here; attach the output of `cudoctor --json" +
           std::string(o.redacted ? " --redact" : "") + "` instead._\n";
  else
    out += "\n<details><summary>All facts (JSON)</summary>\n\n```json\n" + embedded + "```\n\n</details>\n";
  return out;
}

}  // namespace cudoctor::render
