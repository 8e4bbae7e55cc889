#include "cudoctor/kb/settings.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace cudoctor::kb {
namespace {

using nlohmann::json;

class Record {
 public:
  Record(std::string where, const json& j) : m_where(std::move(where)), m_j(j) {
    if (!j.is_object()) fail("not an object");
  }
  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(m_where + ": " + what); }
  std::string str(const char* key) const {
    const auto s = opt(key);
    if (s.empty()) fail(std::string("needs a non-empty string \"") + key + "\"");
    return s;
  }
  std::string opt(const char* key) const {
    if (!m_j.contains(key)) return "";
    if (!m_j[key].is_string()) fail(std::string("\"") + key + "\" is not a string");
    return m_j[key].get<std::string>();
  }
  std::string one_of(const char* key, std::initializer_list<const char*> allowed) const {
    const auto s = str(key);
    for (const char* a : allowed)
      if (s == a) return s;
    fail(std::string("\"") + key + "\" is not an allowed value: '" + s + "'");
  }
  std::string source() const {
    const auto s = str("source");
    if (!s.starts_with("https://")) fail("source is not an https URL: '" + s + "'");
    return s;
  }
  const json& operator[](const char* key) const { return m_j[key]; }
  bool has(const char* key) const { return m_j.contains(key); }

 private:
  std::string m_where;
  const json& m_j;
};

const json& list(const std::string& file, const json& doc, const char* key) {
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array())
    throw std::runtime_error(file + ": \"" + key + "\" must be a list");
  return doc[key];
}

SettingRecord parse_record(const std::string& where, const json& j) {
  const Record r(where, j);
  SettingRecord s;
  s.name = r.str("name");
  s.kind = r.one_of("kind", {"env", "module", "nvidia-smi"});
  s.owner = r.str("owner");
  s.grammar = r.one_of("grammar", {"int", "choice", "exact_bool", "text", "workspace", "alloc_conf"});
  s.effect = r.str("effect");
  s.default_value = r.opt("default");
  s.word_reads_as = r.opt("word_reads_as");
  if (!s.word_reads_as.empty() && s.grammar != "int") r.fail("\"word_reads_as\" is for grammar int");
  s.claim = r.opt("claim");
  s.truth = r.opt("truth");
  if (s.claim.empty() != s.truth.empty()) r.fail("\"claim\" and \"truth\" go together");
  s.source = r.source();
  if (r.has("accepted")) {
    if (!r["accepted"].is_array()) r.fail("\"accepted\" must be a list");
    for (const auto& a : r["accepted"]) {
      if (!a.is_string() || a.get<std::string>().empty()) r.fail("\"accepted\" holds a non-string");
      s.accepted.push_back(a.get<std::string>());
    }
  }
  if ((s.grammar == "choice") != !s.accepted.empty()) r.fail("\"accepted\" is for grammar choice, and choice needs it");
  if (r.has("values")) {
    if (!r["values"].is_array()) r.fail("\"values\" must be a list");
    std::size_t i = 0;
    for (const auto& v : r["values"]) {
      const Record vr(where + " value " + std::to_string(i++), v);
      SettingValue sv{vr.str("match"), vr.one_of("verdict", {"costs-speed", "no-effect", "fine"}), vr.str("says")};
      if ((sv.match == "nonzero" || sv.match == "zero") && s.grammar != "int")
        vr.fail("match " + sv.match + " is for grammar int");
      if (s.grammar == "choice" && sv.match != "*" &&
          std::find(s.accepted.begin(), s.accepted.end(), sv.match) == s.accepted.end())
        vr.fail("match '" + sv.match + "' is not an accepted value");
      s.values.push_back(std::move(sv));
    }
  }
  return s;
}

}  // namespace

const SettingRecord* Settings::find(const std::string& name) const {
  for (const auto& r : records)
    if (r.name == name) return &r;
  return nullptr;
}

const NotRead* Settings::find_not_read(const std::string& name) const {
  for (const auto& r : not_read)
    if (r.name == name) return &r;
  return nullptr;
}

const AllocatorKey* Settings::allocator_key(const std::string& key) const {
  for (const auto& k : allocator_keys)
    if (k.key == key) return &k;
  return nullptr;
}

Settings parse_settings(const std::string& file, const void* json_document) {
  const auto& doc = *static_cast<const json*>(json_document);
  Settings out;
  std::set<std::string> names;
  std::size_t i = 0;
  for (const auto& j : list(file, doc, "settings")) {
    auto s = parse_record(file + " setting " + std::to_string(i++), j);
    if (!names.insert(s.name).second) throw std::runtime_error(file + ": setting " + s.name + " is listed twice");
    out.records.push_back(std::move(s));
  }
  i = 0;
  for (const auto& j : list(file, doc, "not_read")) {
    const Record r(file + " not_read " + std::to_string(i++), j);
    NotRead n{r.str("name"), false, r.str("says"), r.str("instead"), r.opt("claim"), r.source()};
    if (!r.has("proven") || !r["proven"].is_boolean()) r.fail("needs a boolean \"proven\"");
    n.proven = r["proven"].get<bool>();
    if (!names.insert(n.name).second) throw std::runtime_error(file + ": " + n.name + " is listed twice");
    out.not_read.push_back(std::move(n));
  }
  i = 0;
  std::set<std::string> keys;
  for (const auto& j : list(file, doc, "allocator_keys")) {
    const Record r(file + " allocator key " + std::to_string(i++), j);
    AllocatorKey k;
    k.key = r.str("key");
    k.grammar = r.one_of("grammar", {"mb", "fraction", "roundup", "py_bool", "power2", "backend"});
    if (r.has("min")) {
      if (!r["min"].is_number_integer()) r.fail("\"min\" must be an integer");
      k.min = r["min"].get<int>();
    }
    if (!r.has("native_only") || !r["native_only"].is_boolean()) r.fail("needs a boolean \"native_only\"");
    k.native_only = r["native_only"].get<bool>();
    k.effect = r.str("effect");
    k.cost = r.opt("cost");
    k.source = r.source();
    if (!keys.insert(k.key).second) throw std::runtime_error(file + ": allocator key " + k.key + " is listed twice");
    out.allocator_keys.push_back(std::move(k));
  }
  return out;
}

}  // namespace cudoctor::kb
