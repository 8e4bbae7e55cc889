#pragma once
// The child-process protocol: a probe that touches a vendor library runs in a forked child,
// sends its facts back over a pipe, and is killed at its deadline. A crash, hang or exit of
// the vendor library becomes a ChildOutcome, never a crash or hang of cudoctor.
#include <chrono>
#include <functional>
#include <string>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::runtime {

struct ChildRun {
  snapshot::ChildOutcome outcome;
  std::string payload;  // what the child's function returned; complete only when status is "ok"
};

// Runs fn in a child process. The child's stdout and stderr go to /dev/null so a chatty
// library cannot corrupt our output. status: ok, crashed, timeout, exited (the child ended
// without delivering, e.g. a library called exit()), failed_to_start.
ChildRun run_in_child(const std::function<std::string()>& fn, std::chrono::milliseconds timeout);

}  // namespace cudoctor::runtime
