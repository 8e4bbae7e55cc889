#pragma once
#include "cudoctor/cli/options.hpp"

namespace cudoctor::cli {

// `cudoctor check`: gathers, judges, renders; returns the exit code (0 healthy, 1 broken,
// 2 when the root cannot be used).
int run_check(const CommonOptions& o, const char* tool_version);

}  // namespace cudoctor::cli
