#include "golden.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cudoctor::testing {

namespace {
bool updating() {
  // CUDOCTOR_UPDATE_GOLDEN (singular) is the name it had first.
  for (const char* name : {"CUDOCTOR_UPDATE_GOLDENS", "CUDOCTOR_UPDATE_GOLDEN"})
    if (const char* u = std::getenv(name); u && std::string(u) == "1") return true;
  return false;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

void normalise(nlohmann::json& j, const std::string& root) {
  if (j.is_string()) {
    auto s = j.get<std::string>();
    replace_all(s, root, "<root>");
    j = s;
  } else if (j.is_array()) {
    for (auto& e : j) normalise(e, root);
  } else if (j.is_object()) {
    for (auto& [k, v] : j.items()) {
      if (k == "seconds" && v.is_number())
        v = 0;
      else if (k == "knowledge_base" && v.is_object())
        v["date"] = "<kb-date>";  // a data update is no change of the report's shape
      else
        normalise(v, root);
    }
  }
}
}  // namespace

std::string check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(CUDOCTOR_GOLDEN_DIR) + "/" + name;
  if (updating()) {
    std::ofstream(path, std::ios::binary) << actual;
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return "no golden file " + path + " (run with CUDOCTOR_UPDATE_GOLDENS=1 to create it)";
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str() == actual) return "";
  return "output differs from " + path + " (CUDOCTOR_UPDATE_GOLDENS=1 rewrites it; review the diff)\n--- actual ---\n" +
         actual;
}

std::string normalised_text(std::string text, const std::string& root) {
  replace_all(text, root, "<root>");
  return text;
}

nlohmann::json normalised_report(nlohmann::json report, const std::string& root) {
  normalise(report, root);
  return report;
}

}  // namespace cudoctor::testing
