#pragma once
// The knowledge base frozen under tests/fixtures/kb/: a copy of data/*.json taken when the
// planner tests were written, so a correct change to the live data does not turn a test of
// planner logic red. The live data has its own checks (KbFacts.*, kb_test.cpp).
#include <string>

#include "cudoctor/kb/kb.hpp"

namespace cudoctor::testing {

// The frozen files compiled into the test binary, loaded as --kb loads a directory.
const kb::KnowledgeBase& frozen_kb();
// The directory itself, for `cudoctor --kb DIR`.
std::string frozen_kb_dir();

}  // namespace cudoctor::testing
