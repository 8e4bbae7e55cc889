#pragma once
// Reading the knowledge base's JSON files: one record at a time, every error naming the file,
// the record and the field. Internal to kb/.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudoctor/kb/kb.hpp"

namespace cudoctor::kb::parse {

using nlohmann::json;

// Reading one record: every error names the file, the record and the field.
class Reader {
 public:
  Reader(std::string file, std::size_t index, const json& j)
      : m_where(file + " record " + std::to_string(index)), m_j(j) {
    if (!j.is_object()) fail("not an object");
  }
  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(m_where + ": " + what); }
  bool has(const char* key) const { return m_j.contains(key) && !m_j[key].is_null(); }
  std::string str(const char* key) const {
    if (!has(key) || !m_j[key].is_string()) fail(std::string("needs a string \"") + key + "\"");
    return m_j[key].get<std::string>();
  }
  std::string opt_str(const char* key) const {
    return has(key) && m_j[key].is_string() ? m_j[key].get<std::string>() : "";
  }
  int integer(const char* key) const {
    if (!has(key) || !m_j[key].is_number_integer()) fail(std::string("needs an integer \"") + key + "\"");
    return m_j[key].get<int>();
  }
  util::Version version(const char* key) const { return parse_version(str(key), key); }
  util::Version parse_version(const std::string& text, const char* key) const {
    auto v = util::Version::parse(text);
    if (!v) fail(std::string("\"") + key + "\" is not a version: '" + text + "'");
    return *v;
  }
  // "source" as a string or a list of strings; at least one URL.
  std::vector<std::string> sources() const {
    std::vector<std::string> out;
    if (has("source") && m_j["source"].is_string()) out.push_back(m_j["source"].get<std::string>());
    if (has("source") && m_j["source"].is_array())
      for (const auto& s : m_j["source"])
        if (s.is_string()) out.push_back(s.get<std::string>());
    if (out.empty()) fail("no \"source\"");
    for (const auto& s : out)
      if (!s.starts_with("https://")) fail("source is not an https URL: '" + s + "'");
    return out;
  }
  const json& operator[](const char* key) const { return m_j[key]; }
  // "status": one of k_statuses.
  std::string status() const {
    const auto s = opt_str("status");
    for (const char* k : k_statuses)
      if (s == k) return s;
    fail("\"status\" is not one of secondary, unverified, planned, withdrawn: '" + s + "'");
  }
  // A string or a list of strings, each non-empty; empty when absent.
  std::vector<std::string> strings(const char* key) const {
    if (!has(key)) return {};
    std::vector<std::string> out;
    if (m_j[key].is_string())
      out.push_back(m_j[key].get<std::string>());
    else if (m_j[key].is_array())
      for (const auto& x : m_j[key]) {
        if (!x.is_string()) fail(std::string("\"") + key + "\" entries must be strings");
        out.push_back(x.get<std::string>());
      }
    else
      fail(std::string("\"") + key + "\" must be a string or a list of strings");
    for (const auto& x : out)
      if (x.empty()) fail(std::string("\"") + key + "\" has an empty entry");
    return out;
  }

 private:
  std::string m_where;
  const json& m_j;
};

inline const json& records(const std::string& file, const json& doc, const char* key = "records") {
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array())
    throw std::runtime_error(file + ": no \"" + key + "\" array");
  return doc[key];
}

// gpus.json's brands, pcie.json's generations, runtime_libraries.json's records (hardware.cpp).
std::vector<GpuBrand> brands(const std::string& file, const json& doc);
std::vector<PcieGeneration> pcie(const std::string& file, const json& doc);
std::vector<RuntimeOpens> runtime_libraries(const std::string& file, const json& doc);
std::vector<CudaComponent> components(const std::string& file, const json& doc);

}  // namespace cudoctor::kb::parse
