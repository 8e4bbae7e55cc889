#pragma once
// Snapshots of real machines kept under tests/fixtures/snapshots/, for rules tests.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::testing {

// The H200 machine (docker, driver 580) of the real GPU run.
inline snapshot::Snapshot h200_snapshot() {
  std::ifstream in(std::string(CUDOCTOR_FIXTURES_DIR) + "/snapshots/h200-docker-580.json");
  std::stringstream ss;
  ss << in.rdbuf();
  auto s = snapshot::snapshot_from_json_text(ss.str());
  if (!s) throw std::runtime_error(s.error());
  return std::move(s).value();
}

// The first finding with this id, or nullptr.
inline const rules::Finding* find_finding(const std::vector<rules::Finding>& fs, std::string_view id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace cudoctor::testing
