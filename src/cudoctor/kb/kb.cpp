#include "cudoctor/kb/kb.hpp"

#include <cassert>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cudoctor/kb/embedded.hpp"

namespace cudoctor::kb {
namespace {

util::Result<std::map<int, ReturnCode>> parse_return_codes(const std::string& file, const nlohmann::json& doc) {
  std::map<int, ReturnCode> out;
  if (!doc.contains("records") || !doc["records"].is_array())
    return util::error(file + ": no \"records\" array");
  std::size_t i = 0;
  for (const auto& r : doc["records"]) {
    const auto where = file + " record " + std::to_string(i++);
    if (!r.is_object() || !r.contains("code") || !r["code"].is_number_integer())
      return util::error(where + ": no integer \"code\"");
    ReturnCode rc;
    rc.code = r["code"].get<int>();
    rc.name = r.value("name", "");
    rc.meaning = r.value("meaning", "");
    rc.causes = r.value("causes", "");
    rc.source = r.value("source", "");
    if (rc.name.empty() || rc.meaning.empty()) return util::error(where + ": needs \"name\" and \"meaning\"");
    if (rc.source.empty()) return util::error(where + " (" + rc.name + "): no \"source\"");
    if (out.count(rc.code)) return util::error(where + ": code " + std::to_string(rc.code) + " listed twice");
    out[rc.code] = std::move(rc);
  }
  return out;
}

}  // namespace

util::Result<KnowledgeBase> KnowledgeBase::load(const std::vector<std::pair<std::string, std::string>>& files) {
  KnowledgeBase kb;
  for (const auto& [name, text] : files) {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      return util::error(name + ": " + e.what());
    }
    if (name == "nvml_return_codes.json") {
      auto codes = parse_return_codes(name, doc);
      if (!codes) return util::error(codes.error());
      kb.m_nvml = std::move(codes).value();
    }
  }
  if (kb.m_nvml.empty()) return util::error("knowledge base: no NVML return codes");
  return kb;
}

util::Result<KnowledgeBase> KnowledgeBase::load_embedded() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : embedded_files()) files.emplace_back(std::string(f.name), std::string(f.text));
  return load(files);
}

const ReturnCode* KnowledgeBase::nvml_return_code(int code) const {
  const auto it = m_nvml.find(code);
  return it == m_nvml.end() ? nullptr : &it->second;
}

const KnowledgeBase& builtin() {
  static const KnowledgeBase kb = [] {
    auto r = KnowledgeBase::load_embedded();
    if (!r) throw std::logic_error("embedded knowledge base is broken: " + r.error());
    return std::move(r).value();
  }();
  return kb;
}

}  // namespace cudoctor::kb
