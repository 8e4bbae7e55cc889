#pragma once
// The knowledge-base files compiled into the binary (generated from data/*.json).
#include <string_view>
#include <vector>

namespace cudoctor::kb {

struct EmbeddedFile {
  std::string_view name;  // "nvml_return_codes.json"
  std::string_view text;
};

const std::vector<EmbeddedFile>& embedded_files();

}  // namespace cudoctor::kb
