#pragma once
// What the commands read from the machine (or --root) before they judge or print.
#include <optional>
#include <string>

#include "cudoctor/cli/options.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/sys/sys.hpp"

namespace cudoctor::cli {

// Gathers this machine's (or --root's) snapshot; nullopt (after a message) when the root
// or a --python interpreter cannot be used.
std::optional<snapshot::Snapshot> gather_snapshot(const CommonOptions& o, const char* tool_version);

// The toolkit facts alone (`toolkits`, `env`); nullopt (after a message) when the root
// cannot be used.
std::optional<snapshot::ToolkitFacts> gather_toolkits(const CommonOptions& o, const sys::Sys& sys);

// A FILE argument as the tree sees it: a relative path is taken from the current directory,
// as ld.so takes it, when examining this machine.
std::string file_argument(const sys::Sys& sys, const std::string& given);

}  // namespace cudoctor::cli
