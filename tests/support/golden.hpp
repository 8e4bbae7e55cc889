#pragma once
// Golden files: expected output kept under tests/golden/. With CUDOCTOR_UPDATE_GOLDENS=1
// the test rewrites the file instead, to be reviewed as a diff (tests/golden/README.md).
#include <nlohmann/json.hpp>
#include <string>

namespace cudoctor::testing {

// Empty when actual matches the golden file (or it was rewritten); otherwise a message.
std::string check_golden(const std::string& name, const std::string& actual);

// What varies between runs and hosts, made fixed: the fixture's directory becomes <root>,
// child wall times ("seconds") 0.
std::string normalised_text(std::string text, const std::string& root);
nlohmann::json normalised_report(nlohmann::json report, const std::string& root);

}  // namespace cudoctor::testing
