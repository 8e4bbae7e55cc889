#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"
#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::render {

std::string json_text(const nlohmann::json& j, int indent) {
  const auto dumped = j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  // The dump is well-formed UTF-8 and these code points can only stand inside a string, where
  // a \u escape means the same.
  std::string out;
  out.reserve(dumped.size() + 1);
  const auto at = [&](std::size_t i) { return static_cast<unsigned char>(dumped[i]); };
  std::size_t plain = 0;  // the start of the run of bytes copied as they are
  const auto escape = [&](std::size_t i, std::size_t n, unsigned code) {
    out.append(dumped, plain, i - plain);
    out += fmt::format("\\u{:04x}", code);
    plain = i + n;
    return n - 1;
  };
  for (std::size_t i = 0; i < dumped.size(); ++i) {
    const auto c = at(i);
    if (c < 0x7F || (c != 0x7F && c != 0xC2 && c != 0xE2)) continue;
    if (c == 0x7F) {
      i += escape(i, 1, 0x7F);
    } else if (c == 0xC2 && i + 1 < dumped.size() && at(i + 1) >= 0x80 && at(i + 1) <= 0x9F) {
      i += escape(i, 2, at(i + 1));
    } else if (c == 0xE2 && i + 2 < dumped.size() &&
               ((at(i + 1) == 0x80 && at(i + 2) >= 0xA8 && at(i + 2) <= 0xAE) ||
                (at(i + 1) == 0x81 && at(i + 2) >= 0xA6 && at(i + 2) <= 0xA9))) {
      i += escape(i, 3, 0x2000 + ((at(i + 1) & 0x3F) << 6) + (at(i + 2) & 0x3F));
    }
  }
  out.append(dumped, plain, std::string::npos);
  out.push_back('\n');
  return out;
}

nlohmann::json finding_json(const rules::Finding& f) {
  return {{"id", f.id},
          {"layer", std::string(rules::to_string(f.layer))},
          {"severity", std::string(rules::to_string(f.severity))},
          {"title", f.title},
          {"detail", f.detail},
          {"evidence", f.evidence},
          {"fix", {{"text", f.fix.text}, {"commands", f.fix.commands}, {"checks", f.fix.checks}}},
          {"follows_from", f.follows_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.follows_from)},
          {"docs", rules::docs_anchor(f.id)}};
}

std::string json(const report::Report& r, const Options&) {
  return json_text(report_json(r));
}

nlohmann::json report_json(const report::Report& r) {
  nlohmann::json j = r.snapshot;
  // Layers this version does not inspect yet keep their keys, empty, so the contract holds.
  j["toolkits"] = j["toolkit"]["toolkits"];  // the contract's top-level list
  j["pythons"] = j["python"]["envs"];        // the contract's top-level list, each with frameworks[]
  auto& checked = j["checked_layers"] = nlohmann::json::array();
  for (const auto l : r.checked_layers) checked.push_back(std::string(rules::to_string(l)));
  j["knowledge_base"] = {{"date", r.kb_date}};
  auto& findings = j["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f));
  j["verdict"] = {
      {"healthy", r.verdict.healthy},
      {"break_layer", r.verdict.break_layer ? nlohmann::json(std::string(rules::to_string(*r.verdict.break_layer)))
                                            : nlohmann::json(nullptr)},
      {"break_finding",
       r.verdict.break_finding.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.verdict.break_finding)},
      {"summary", r.verdict.summary}};
  return j;
}

std::string tune_json(const report::Report& r) {
  nlohmann::json j = {{"schema", r.snapshot.schema},
                      {"tool_version", r.snapshot.tool_version},
                      {"root", r.snapshot.root},
                      {"settings", r.snapshot.settings},
                      {"unreadable", r.snapshot.unreadable},
                      {"knowledge_base", {{"date", r.kb_date}}}};
  auto& findings = j["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings)
    if (rules::is_tuning(f.id)) findings.push_back(finding_json(f));
  return json_text(j);
}

}  // namespace cudoctor::render
