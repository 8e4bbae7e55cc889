// `cudoctor explain` as text, JSON and Markdown: the causes in rank order, the log lines that
// show each, what the machine says, and the fix.
#include <fmt/format.h>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {

namespace {

using explain::Confidence;
using explain::Explanation;
using explain::RankedCause;
using util::visible;

const explain::Match* match_at(const Explanation& ex, std::size_t line) {
  for (const auto& m : ex.reading.matches)
    if (m.line == line) return &m;
  return nullptr;
}

std::string headline(const Explanation& ex) {
  const auto& r = ex.reading;
  std::string s = fmt::format("cudoctor explain: {}: {} line{} read", visible(r.name), r.stats.lines,
                              r.stats.lines == 1 ? "" : "s");
  std::size_t sigs = 0;
  for (std::size_t i = 0; i < r.matches.size(); ++i) {
    bool first = true;
    for (std::size_t j = 0; j < i && first; ++j) first = r.matches[j].signature != r.matches[i].signature;
    sigs += first ? 1 : 0;
  }
  s += fmt::format(", {} signature{} matched", sigs, sigs == 1 ? "" : "s");
  return s;
}

std::vector<std::string> notes(const Explanation& ex) {
  std::vector<std::string> out;
  if (ex.reading.truncated)
    out.push_back(fmt::format("Only the first {} MiB were read; give the part of the log around the failure.",
                              ex.reading.stats.bytes >> 20));
  if (ex.reading.stats.cut_lines)
    out.push_back(
        fmt::format("{} line(s) longer than 64 KiB were read only up to 64 KiB.", ex.reading.stats.cut_lines));
  if (ex.reading.matches_dropped)
    out.push_back(fmt::format("{} further matches beyond the first {} were not kept.", ex.reading.matches_dropped,
                              explain::Matcher::k_max_matches));
  if (!ex.machine.other_machine.empty())
    out.push_back("This log is from another machine: " + ex.machine.other_machine +
                  ". The causes are ranked by the log alone.");
  else if (ex.machine.joined)
    out.push_back(fmt::format("Ranked with this machine's own check ({}).", visible(ex.machine.root)));
  else
    out.push_back("Ranked by the log alone (--no-live): run it on the affected machine to confirm a cause.");
  return out;
}

void cause_text(std::string& out, const Explanation& ex, const RankedCause& c, std::size_t n, bool full,
                std::size_t width) {
  out += fmt::format("\n{}. {}  [{}]  {} ({})\n", n, visible(c.title), explain::to_string(c.confidence), c.id,
                     rules::to_string(c.layer));
  if (c.program_fault) out += "   This is the program or its workload, not the CUDA environment.\n";
  out += "   " + wrap("Why: " + visible(c.because), width - 8, "        ") + "\n";
  if (full) {
    out += "   Log:\n";
    for (const auto line : c.lines)
      if (const auto* m = match_at(ex, line)) out += fmt::format("   {:>6} | {}\n", line, visible(m->text, 200));
  } else if (!c.lines.empty()) {
    out += fmt::format("   Log: line {}\n", c.lines.front());
  }
  if (!c.machine_evidence.empty()) {
    out += "   This machine shows it:\n";
    for (const auto& e : c.machine_evidence) out += "     " + visible(e) + "\n";
  }
  if (!c.confirm.empty() && c.confidence != Confidence::confirmed) out += "   check: " + visible(c.confirm) + "\n";
  if (c.confidence == Confidence::confirmed && !c.machine_fix.text.empty()) {
    out += "   " + wrap("Fix: " + visible(c.machine_fix.text), width - 8, "        ") + "\n";
    for (const auto& cmd : c.machine_fix.commands) out += "     $ " + visible(cmd) + "\n";
    for (const auto& chk : c.machine_fix.checks) out += "     check: " + visible(chk) + "\n";
  } else {
    out += "   " + wrap("Fix: " + visible(c.fix), width - 8, "        ") + "\n";
  }
}

nlohmann::json cause_json(const Explanation& ex, const RankedCause& c) {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto line : c.lines)
    if (const auto* m = match_at(ex, line)) ev.push_back({{"line", line}, {"text", m->text}});
  nlohmann::json fix = {{"text", c.fix}, {"commands", nlohmann::json::array()}, {"checks", nlohmann::json::array()}};
  if (c.confidence == Confidence::confirmed && !c.machine_fix.text.empty())
    fix = {{"text", c.machine_fix.text}, {"commands", c.machine_fix.commands}, {"checks", c.machine_fix.checks}};
  return {{"id", c.id},
          {"layer", rules::to_string(c.layer)},
          {"severity", rules::to_string(c.severity)},
          {"title", c.title},
          {"confidence", explain::to_string(c.confidence)},
          {"program_fault", c.program_fault},
          {"because", c.because},
          {"evidence", ev},
          {"machine_evidence", c.machine_evidence},
          {"signatures", c.signatures},
          {"confirm", c.confirm},
          {"fix", fix}};
}

}  // namespace

std::string explain_text(const Explanation& ex, const Options& o) {
  std::string out = headline(ex) + "\n";
  for (const auto& n : notes(ex)) out += wrap(n, o.width, "") + "\n";
  if (ex.causes.empty()) {
    out += "\nNo known signature matched: this log names no cause the knowledge base knows.\n";
    if (!ex.reading.error_lines.empty()) {
      out += "Lines that look like errors:\n";
      for (const auto& [line, text] : ex.reading.error_lines) out += fmt::format("  {:>6} | {}\n", line, visible(text));
    }
    out += "Run `cudoctor check` on the machine the log comes from; it does not need the log.\n";
    return out;
  }
  cause_text(out, ex, ex.causes.front(), 1, true, o.width);
  if (!ex.arithmetic.empty()) {
    out += "\n   The numbers:\n";
    for (const auto& a : ex.arithmetic) out += "   - " + wrap(visible(a), o.width - 5, "     ") + "\n";
  }
  if (ex.causes.size() > 1) out += "\nOther causes that give these lines, most likely first:\n";
  for (std::size_t i = 1; i < ex.causes.size(); ++i) cause_text(out, ex, ex.causes[i], i + 1, o.verbose, o.width);
  if (!ex.machine.refuted.empty()) {
    out += "\nRuled out by this machine:\n";
    for (const auto& [id, by] : ex.machine.refuted) out += fmt::format("  {} (this machine shows {})\n", id, by);
  }
  return out;
}

nlohmann::json explain_json(const Explanation& ex) {
  const auto& r = ex.reading;
  nlohmann::json causes = nlohmann::json::array(), sigs = nlohmann::json::array(), facts = nlohmann::json::array();
  for (const auto& c : ex.causes) causes.push_back(cause_json(ex, c));
  for (const auto& m : r.matches) {
    nlohmann::json caps = nlohmann::json::object();
    for (const auto& c : m.captures) caps[c.name] = {{"kind", explain::to_string(c.kind)}, {"value", c.value}};
    sigs.push_back({{"id", m.signature->id},
                    {"line", m.line},
                    {"text", m.text},
                    {"emitter", m.signature->emitter},
                    {"priority", m.signature->priority},
                    {"source", m.signature->source},
                    {"captures", caps}});
  }
  for (const auto& f : r.facts)
    facts.push_back({{"id", f.id}, {"kind", explain::to_string(f.kind)}, {"value", f.value}, {"line", f.line}});
  nlohmann::json refuted = nlohmann::json::array();
  for (const auto& [id, by] : ex.machine.refuted) refuted.push_back({{"id", id}, {"refuted_by", by}});
  return {{"command", "explain"},
          {"input",
           {{"name", r.name},
            {"bytes", r.stats.bytes},
            {"lines", r.stats.lines},
            {"truncated", r.truncated},
            {"cut_lines", r.stats.cut_lines}}},
          {"machine",
           {{"joined", ex.machine.joined},
            {"root", ex.machine.root},
            {"other_machine", ex.machine.other_machine},
            {"refuted", refuted}}},
          {"causes", causes},
          {"signatures", sigs},
          {"facts", facts},
          {"arithmetic", ex.arithmetic},
          {"notes", notes(ex)}};
}

std::string explain_markdown(const Explanation& ex) {
  std::string out = "## " + headline(ex) + "\n\n";
  for (const auto& n : notes(ex)) out += "> " + n + "\n";
  if (ex.causes.empty()) return out + "\nNo known signature matched.\n";
  std::size_t n = 0;
  for (const auto& c : ex.causes) {
    out += fmt::format("\n### {}. {} — {} (`{}`, {})\n\n", ++n, c.title, explain::to_string(c.confidence), c.id,
                       rules::to_string(c.layer));
    if (c.program_fault) out += "_The program or its workload, not the CUDA environment._\n\n";
    out += "- Why: " + c.because + "\n";
    for (const auto line : c.lines)
      if (const auto* m = match_at(ex, line)) out += fmt::format("- Line {}: `{}`\n", line, m->text);
    for (const auto& e : c.machine_evidence) out += "- This machine: " + e + "\n";
    if (!c.confirm.empty()) out += "- Check: `" + c.confirm + "`\n";
    out += "- Fix: " +
           (c.confidence == Confidence::confirmed && !c.machine_fix.text.empty() ? c.machine_fix.text : c.fix) + "\n";
    for (const auto& cmd : c.machine_fix.commands)
      if (c.confidence == Confidence::confirmed) out += "  - `" + cmd + "`\n";
    if (n == 1 && !ex.arithmetic.empty()) {
      out += "\nThe numbers:\n\n";
      for (const auto& a : ex.arithmetic) out += "- " + a + "\n";
    }
  }
  return out;
}

}  // namespace cudoctor::render
