#pragma once
// The child-process protocol: a probe that touches a vendor library runs in a forked child,
// sends its facts back over a pipe, and is killed at its deadline. A crash, hang or exit of
// the vendor library becomes a ChildOutcome, never a crash or hang of cudoctor.
#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::runtime {

struct ChildRun {
  snapshot::ChildOutcome outcome;
  std::string payload;  // what the child's function returned; complete only when status is "ok"
};

// Runs fn in a child process. The child's stdout and stderr go to /dev/null so a chatty
// library cannot corrupt our output. status: ok, crashed, timeout, exited (the child ended
// without delivering, e.g. a library called exit()), failed_to_start.
ChildRun run_in_child(const std::function<std::string()>& fn, std::chrono::milliseconds timeout);

// Turns a child's JSON reply into facts of type T (which has an `outcome`), keeping the
// child's outcome. A reply {"load_error": "..."} (the library could not be loaded) becomes
// outcome "load_failed"; unparsable JSON becomes "bad_reply".
template <typename T>
T parse_reply(const ChildRun& run) {
  T facts;
  facts.outcome = run.outcome;
  if (run.outcome.status != "ok") return facts;
  try {
    const auto j = nlohmann::json::parse(run.payload);
    if (j.contains("load_error")) {
      facts.outcome.status = "load_failed";
      facts.outcome.message = j["load_error"].template get<std::string>();
      return facts;
    }
    facts = j.template get<T>();
    facts.outcome = run.outcome;
  } catch (const nlohmann::json::exception& e) {
    facts.outcome.status = "bad_reply";
    facts.outcome.message = e.what();
  }
  return facts;
}

}  // namespace cudoctor::runtime
