#pragma once
// Snapshots of real machines kept under tests/fixtures/snapshots/, for rules tests. They are
// compiled into the test binary (tests/CMakeLists.txt), so the unit tests read no files.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/kb/embedded.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::testing {

namespace snapshot_files {
// Generated from tests/fixtures/snapshots/*.json by cmake/embed_kb.cmake.
const std::vector<kb::EmbeddedFile>& embedded_files();
}  // namespace snapshot_files

// The snapshot tests/fixtures/snapshots/<name> holds.
inline snapshot::Snapshot fixture_snapshot(std::string_view name) {
  for (const auto& f : snapshot_files::embedded_files()) {
    if (f.name != name) continue;
    auto s = snapshot::snapshot_from_json_text(std::string(f.text));
    if (!s) throw std::runtime_error(std::string(name) + ": " + s.error());
    return std::move(s).value();
  }
  throw std::runtime_error("no snapshot " + std::string(name) + " in tests/fixtures/snapshots");
}

// The H200 machine (docker, driver 580) of the real GPU run.
inline snapshot::Snapshot h200_snapshot() {
  return fixture_snapshot("h200-docker-580.json");
}

// The first finding with this id, or nullptr.
inline const rules::Finding* find_finding(const std::vector<rules::Finding>& fs, std::string_view id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace cudoctor::testing
