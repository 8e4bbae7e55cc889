#pragma once
// How the readers of tuning settings read their values: strtol's reading of a number, the
// CUBLAS_WORKSPACE_CONFIG pairs PyTorch sums, the PYTORCH_CUDA_ALLOC_CONF options PyTorch's
// allocator checks. Pure: the rules in tune_rules.cpp judge what these give.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/kb/settings.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::rules::tune {

// strtol(value, &end, 0) as the readers do it: the leading integer (0 when there is none), and
// whether the whole value was that integer.
struct IntReading {
  long long value = 0;
  bool whole = false;
};
IntReading read_int(std::string_view value);

// CUBLAS_WORKSPACE_CONFIG as PyTorch's parser reads it: every ":SIZE:COUNT" (SIZE in KiB).
struct Workspace {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;  // (KiB, count)
  std::uint64_t bytes = 0;
  bool parsed() const { return !pairs.empty(); }
  // torch.use_deterministic_algorithms(True) accepts exactly these strings.
  bool deterministic_ok = false;
};
Workspace read_workspace(std::string_view value);

// One key:value of PYTORCH_CUDA_ALLOC_CONF and what is wrong with it ("" nothing).
struct AllocItem {
  std::string key;
  std::string value;
  const kb::AllocatorKey* known = nullptr;  // the knowledge base's record, nullptr when it has none
  std::string problem;                      // why PyTorch rejects it
  std::string note;                         // accepted, but worth saying (ignored under cudaMallocAsync)
};
// torch: the words the torch that would read it holds (LibraryWords), nullptr when its libraries
// could not be searched (then the knowledge base's keys decide).
std::vector<AllocItem> read_alloc_conf(std::string_view value, const kb::Settings& settings,
                                       const snapshot::LibraryWords* torch);

// The knowledge base's allocator key nearest to a misspelt one, "" when none is close.
std::string nearest_key(const std::string& key, const kb::Settings& settings);

// "32 MiB", "8.1 MiB", "512 KiB".
std::string bytes_text(std::uint64_t bytes);

}  // namespace cudoctor::rules::tune
