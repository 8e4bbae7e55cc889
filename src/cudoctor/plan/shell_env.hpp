#pragma once
// `cudoctor env`: the environment that puts one toolkit in effect, computed from the facts.
// PATH and LD_LIBRARY_PATH keep every entry that belongs to no toolkit, in order; entries of
// toolkits are dropped; the chosen toolkit's directories go first.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::plan {

struct ShellEnv {
  std::vector<std::string> path;
  std::vector<std::string> ld_library_path;
  std::optional<std::string> cuda_home;       // nullopt: unset it
  std::vector<std::string> toolkit_prefixes;  // what counts as a toolkit's entry (for --write)
  std::string chosen_bin, chosen_lib;         // "" with --unset
};

// target null: take every toolkit away (--unset). to_host maps a logical path to the path
// the shell will use (the --root prefix).
ShellEnv shell_env(const snapshot::ToolkitFacts& facts, const snapshot::Toolkit* target,
                   const std::function<std::string(const std::string&)>& to_host);

// The toolkit an argument names: a root path (canonical, as the caller resolved it) or a
// version prefix ("11.8", "13"); the newest that matches.
const snapshot::Toolkit* find_toolkit(const snapshot::ToolkitFacts& facts, const std::string& arg);

}  // namespace cudoctor::plan
