#pragma once
// The knowledge base: facts from NVIDIA's and the frameworks' documents, each with its
// source URL, kept as data (data/*.json) and queried by the rules.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/util/result.hpp"

namespace cudoctor::kb {

struct ReturnCode {
  int code = 0;
  std::string name;     // "NVML_ERROR_DRIVER_NOT_LOADED"
  std::string meaning;  // NVIDIA's description
  std::string causes;   // the usual causes on Linux, "" when nothing beyond the meaning
  std::string source;   // URL (and revision) the name and meaning come from
};

class KnowledgeBase {
public:
  // Loads the files compiled into the binary; an error names the file and the record.
  static util::Result<KnowledgeBase> load_embedded();
  // Loads from (name, JSON text) pairs.
  static util::Result<KnowledgeBase> load(const std::vector<std::pair<std::string, std::string>>& files);

  const ReturnCode* nvml_return_code(int code) const;
  const std::map<int, ReturnCode>& nvml_return_codes() const { return m_nvml; }

private:
  std::map<int, ReturnCode> m_nvml;
};

// The embedded knowledge base, loaded once; a broken embedded file is a bug (asserts).
const KnowledgeBase& builtin();

}  // namespace cudoctor::kb
