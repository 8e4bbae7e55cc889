#include "cudoctor/explain/signatures.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cudoctor/kb/json_read.hpp"
#include "cudoctor/rules/catalog.hpp"

namespace cudoctor::explain {

namespace {

using nlohmann::json;

constexpr std::pair<CaptureKind, std::string_view> k_kinds[] = {
    {CaptureKind::driver_api, "driver_api"},
    {CaptureKind::cuda_version, "cuda_version"},
    {CaptureKind::driver_version, "driver_version"},
    {CaptureKind::soname, "soname"},
    {CaptureKind::sm, "sm"},
    {CaptureKind::compute_capability, "compute_capability"},
    {CaptureKind::xid, "xid"},
    {CaptureKind::pci_bus, "pci_bus"},
    {CaptureKind::gpu_name, "gpu_name"},
    {CaptureKind::framework_version, "framework_version"},
    {CaptureKind::symbol, "symbol"},
    {CaptureKind::library, "library"},
    {CaptureKind::path, "path"},
    {CaptureKind::code, "code"},
    {CaptureKind::text, "text"},
};

constexpr const char* k_xid_kinds[] = {"application", "memory", "bus", "nvlink", "firmware", "other"};

struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string text_of(const json& j, const std::string& where, const char* key, bool required = true) {
  if (!j.contains(key)) {
    if (required) throw Bad(fmt::format("{}: \"{}\" is missing", where, key));
    return "";
  }
  if (!j[key].is_string()) throw Bad(fmt::format("{}: \"{}\" must be a string", where, key));
  return j[key].get<std::string>();
}

// The captures and their kinds. That each is a group of the pattern, and that the pattern is
// RE2 at all, the matcher checks when it compiles them (Matcher::compile), once.
std::vector<Capture> checked_captures(const json& j, const std::string& where, const std::string& pattern) {
  std::vector<Capture> out;
  if (!j.contains("captures")) return out;
  if (!j["captures"].is_object()) throw Bad(where + ": \"captures\" must be an object");
  for (const auto& [name, kind] : j["captures"].items()) {
    if (pattern.find("(?P<" + name + ">") == std::string::npos)
      throw Bad(fmt::format("{}: capture {} is not a named group of the pattern", where, name));
    Capture c{name, CaptureKind::text};
    bool known = false;
    for (const auto& [k, s] : k_kinds)
      if (kind.is_string() && kind.get<std::string>() == s) c.kind = k, known = true;
    if (!known) throw Bad(fmt::format("{}: capture {} has an unknown kind", where, name));
    out.push_back(std::move(c));
  }
  return out;
}

Cause parse_cause(const json& j, const std::string& where) {
  if (!j.is_object()) throw Bad(where + ": a cause must be an object");
  Cause c;
  c.id = text_of(j, where, "id");
  if (!rules::find_entry(c.id)) throw Bad(fmt::format("{}: cause {} is not a catalog id", where, c.id));
  c.because = text_of(j, where, "because");
  c.confirm = text_of(j, where, "confirm", false);
  c.fix = text_of(j, where, "fix");
  if (j.contains("when")) {
    if (!j["when"].is_object()) throw Bad(where + ": \"when\" must be an object");
    for (const auto& [name, values] : j["when"].items()) {
      if (!values.is_array()) throw Bad(fmt::format("{}: when.{} must be a list", where, name));
      for (const auto& v : values) c.when[name].push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
  return c;
}

Signature parse_signature(const json& j, std::size_t index) {
  std::string where = fmt::format("log_signatures.json: signature {}", index);
  if (!j.is_object()) throw Bad(where + " must be an object");
  Signature s;
  s.id = text_of(j, where, "id");
  where += " (" + s.id + ")";
  s.pattern = text_of(j, where, "pattern");
  s.emitter = text_of(j, where, "emitter");
  s.era = text_of(j, where, "era", false);
  s.source = text_of(j, where, "source");
  if (s.source.rfind("https://", 0) != 0) throw Bad(where + ": the source must be an https URL");
  if (!j.contains("priority") || !j["priority"].is_number_integer())
    throw Bad(where + ": \"priority\" must be a number");
  s.priority = j["priority"].get<int>();
  if (s.priority < 0 || s.priority > 100) throw Bad(where + ": \"priority\" must be 0–100");
  s.captures = checked_captures(j, where, s.pattern);
  if (!j.contains("causes") || !j["causes"].is_array() || j["causes"].empty() || j["causes"].size() > 5)
    throw Bad(where + ": \"causes\" must list 1–5 causes");
  for (const auto& c : j["causes"]) s.causes.push_back(parse_cause(c, where));
  for (const auto& c : s.causes)
    for (const auto& [name, _] : c.when) {
      bool found = false;
      for (const auto& cap : s.captures) found = found || cap.name == name;
      if (!found) throw Bad(fmt::format("{}: cause {} depends on {}, which is not a capture", where, c.id, name));
    }
  return s;
}

}  // namespace

std::string_view to_string(CaptureKind k) {
  for (const auto& [kind, s] : k_kinds)
    if (kind == k) return s;
  return "text";
}

util::Result<Library> parse_library(std::string_view text) {
  auto read = kb::read_json(text);
  if (!read) return util::error("log_signatures.json: not valid JSON: " + read.error());
  try {
    const auto& doc = *read;
    if (!doc.is_object() || !doc.contains("signatures") || !doc["signatures"].is_array())
      return util::error("log_signatures.json: \"signatures\" must be a list");
    Library lib;
    std::map<std::string, bool> seen;
    for (std::size_t i = 0; i < doc["signatures"].size(); ++i) {
      auto s = parse_signature(doc["signatures"][i], i);
      if (seen[s.id]) throw Bad("log_signatures.json: signature id " + s.id + " is used twice");
      seen[s.id] = true;
      lib.signatures.push_back(std::move(s));
    }
    for (const auto& f : doc.value("facts", json::array())) {
      const std::string where = "log_signatures.json: fact " + f.value("id", std::string("?"));
      FactPattern p{text_of(f, where, "id"), text_of(f, where, "pattern"), {}, text_of(f, where, "source")};
      p.captures = checked_captures(f, where, p.pattern);
      lib.facts.push_back(std::move(p));
    }
    const auto refuted_by = doc.value("refuted_by", json::object());
    for (const auto& [cause, ids] : refuted_by.items()) {
      if (!rules::find_entry(cause)) throw Bad("log_signatures.json: refuted_by: " + cause + " is not a catalog id");
      for (const auto& id : ids) {
        const auto s = id.get<std::string>();
        if (!rules::find_entry(s))
          throw Bad("log_signatures.json: refuted_by." + cause + ": " + s + " is not a catalog id");
        lib.refuted_by[cause].push_back(s);
      }
    }
    for (const auto& x : doc.value("xids", json::array())) {
      const std::string where = "log_signatures.json: xid " + x.value("xid", json()).dump();
      Xid r;
      if (!x.contains("xid") || !x["xid"].is_number_integer()) throw Bad(where + ": \"xid\" must be a number");
      r.number = x["xid"].get<int>();
      r.mnemonic = text_of(x, where, "mnemonic");
      r.kind = text_of(x, where, "kind");
      bool known = false;
      for (const char* k : k_xid_kinds) known = known || r.kind == k;
      if (!known) throw Bad(where + ": unknown kind " + r.kind);
      r.action = text_of(x, where, "action");
      r.source = text_of(x, where, "source");
      lib.xids[r.number] = std::move(r);
    }
    for (const auto& id : doc.value("program_faults", json::array())) {
      const auto s = id.get<std::string>();
      if (!rules::find_entry(s)) throw Bad("log_signatures.json: program_faults: " + s + " is not a catalog id");
      lib.program_faults.push_back(s);
    }
    for (const auto& so : doc.value("sonames", json::array()))
      lib.sonames.push_back(
          {so.at("library").get<std::string>(), so.at("soname_major").get<int>(), so.at("cuda_major").get<int>()});
    return lib;
  } catch (const json::exception& e) {
    return util::error(std::string("log_signatures.json: ") + e.what());
  } catch (const Bad& e) {
    return util::error(e.what());
  }
}

}  // namespace cudoctor::explain
