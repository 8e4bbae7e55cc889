#include "frozen_kb.hpp"

#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "cudoctor/kb/embedded.hpp"

namespace cudoctor::testing {

namespace frozen {
// Generated from tests/fixtures/kb/*.json by cmake/embed_kb.cmake.
const std::vector<kb::EmbeddedFile>& embedded_files();
}  // namespace frozen

const kb::KnowledgeBase& frozen_kb() {
  // As `--kb tests/fixtures/kb` loads it, but from memory: a unit test reads no files.
  static const kb::KnowledgeBase k = [] {
    const auto read = [](const std::string& path) -> util::Result<std::optional<std::string>> {
      const auto name = path.substr(path.rfind('/') + 1);
      for (const auto& f : frozen::embedded_files())
        if (f.name == name) return std::optional<std::string>(std::string(f.text));
      return std::optional<std::string>();
    };
    auto r = kb::KnowledgeBase::load_with_overrides(frozen_kb_dir(), read);
    if (!r) throw std::logic_error("tests/fixtures/kb is broken: " + r.error());
    return std::move(r).value();
  }();
  return k;
}

std::string frozen_kb_dir() {
  return std::string(CUDOCTOR_FIXTURES_DIR) + "/kb";
}

}  // namespace cudoctor::testing
