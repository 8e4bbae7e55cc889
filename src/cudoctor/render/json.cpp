#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::render {

nlohmann::json finding_json(const rules::Finding& f) {
  return {{"id", f.id},
          {"layer", std::string(rules::to_string(f.layer))},
          {"severity", std::string(rules::to_string(f.severity))},
          {"title", f.title},
          {"detail", f.detail},
          {"evidence", f.evidence},
          {"fix", {{"text", f.fix.text}, {"commands", f.fix.commands}}}};
}

std::string json(const report::Report& r, const Options&) {
  nlohmann::json j = r.snapshot;
  // Layers this version does not inspect yet keep their keys, empty, so the contract holds.
  j["toolkits"] = j["toolkit"]["toolkits"];  // the contract's top-level list
  j["pythons"] = j["python"]["envs"];  // the contract's top-level list, each with frameworks[]
  auto& checked = j["checked_layers"] = nlohmann::json::array();
  for (const auto l : r.checked_layers) checked.push_back(std::string(rules::to_string(l)));
  auto& findings = j["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings) findings.push_back(finding_json(f));
  j["verdict"] = {{"healthy", r.verdict.healthy},
                  {"break_layer", r.verdict.break_layer ? nlohmann::json(std::string(rules::to_string(*r.verdict.break_layer)))
                                                        : nlohmann::json(nullptr)},
                  {"break_finding", r.verdict.break_finding.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.verdict.break_finding)},
                  {"summary", r.verdict.summary}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cudoctor::render
