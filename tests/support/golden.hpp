#pragma once
// Golden files: expected renderer output kept under tests/golden/. With
// CUDOCTOR_UPDATE_GOLDEN=1 the test rewrites the file instead, to be reviewed as a diff.
#include <string>

namespace cudoctor::testing {

// Empty when actual matches the golden file (or it was rewritten); otherwise a message.
std::string check_golden(const std::string& name, const std::string& actual);

}  // namespace cudoctor::testing
