#pragma once
// Which toolkit each selector (nvcc on PATH, CUDA_HOME, /usr/local/cuda, LD_LIBRARY_PATH, the
// loader's libcudart) points at, computed from the facts.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::plan {

// The toolkit a logical path lies in: under its root or bin directory, or under its library
// directory where that is the toolkit's own (not Debian's shared /usr/lib/x86_64-linux-gnu).
// nullptr when none holds it.
const snapshot::Toolkit* toolkit_of(const snapshot::ToolkitFacts& facts, const std::string& path);

// What selects a toolkit and what it selects, as (selector, what it points at) pairs for
// `cudoctor toolkits`: PATH's nvcc, CUDA_HOME, the /usr/local/cuda link, the first
// LD_LIBRARY_PATH entry inside a toolkit, then the loader's pick of each libcudart.
// canonical resolves a logical path (nullopt when it does not).
using Canonical = std::function<std::optional<std::string>(const std::string&)>;
std::vector<std::pair<std::string, std::string>> toolkit_selectors(const snapshot::ToolkitFacts& facts,
                                                                   const Canonical& canonical);

}  // namespace cudoctor::plan
