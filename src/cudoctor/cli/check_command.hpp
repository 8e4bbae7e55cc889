#pragma once
#include <optional>

#include "cudoctor/cli/options.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::cli {

// `cudoctor check`: gathers, judges, renders; returns the exit code (0 healthy, 1 broken,
// 2 when the root cannot be used).
int run_check(const CommonOptions& o, const char* tool_version);

// Gathers this machine's (or --root's) snapshot; nullopt (after a message) when the root
// cannot be used.
std::optional<snapshot::Snapshot> gather_snapshot(const CommonOptions& o, const char* tool_version);

// `cudoctor plan`; 0 when some build runs, 1 when none does, 2 on bad input.
int run_plan(const CommonOptions& o, const PlanOptions& p, const char* tool_version);

// `cudoctor ldd FILE…`: 0 all resolved, 1 a library or symbol version missing, 2 unreadable.
int run_ldd(const CommonOptions& o, const LddOptions& l);
// `cudoctor archs FILE…`: 0 listed (and, with --cc, runs), 1 does not run there, 2 unreadable.
int run_archs(const CommonOptions& o, const ArchsOptions& a);

// `cudoctor toolkits`: the toolkits and what selects one.
int run_toolkits(const CommonOptions& o);
// `cudoctor env VERSION|PATH`: shell lines that switch to a toolkit; 2 when none matches.
int run_env(const CommonOptions& o, const EnvOptions& e);

// `cudoctor kb [gpu|driver|error|toolkit QUERY]`; 0 answered, 1 nothing matched.
int run_kb(const CommonOptions& o, const KbOptions& k);

}  // namespace cudoctor::cli
