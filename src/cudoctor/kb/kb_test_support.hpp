#pragma once
// For tests: the embedded knowledge-base files with some replaced, to load a table that shows
// one case.
#include <string>
#include <utility>
#include <vector>

#include "cudoctor/kb/embedded.hpp"

namespace cudoctor::kb::testing {

inline std::vector<std::pair<std::string, std::string>> files_with(
    const std::vector<std::pair<std::string, std::string>>& replaced) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : embedded_files()) {
    std::string text(f.text);
    for (const auto& [name, t] : replaced)
      if (name == f.name) text = t;
    out.emplace_back(std::string(f.name), text);
  }
  return out;
}

}  // namespace cudoctor::kb::testing
