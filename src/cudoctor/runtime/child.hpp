#pragma once
// The child-process protocol: a probe that touches a vendor library runs in a forked child,
// sends its facts back over a pipe, and is killed at its deadline. A crash, hang or exit of
// the vendor library becomes a ChildOutcome, never a crash or hang of cudoctor.
//
// What the child may do is narrowed before any vendor code runs (child_sandbox_linux.cpp):
// no program can be executed (setuid helpers such as nvidia-modprobe included), no file or
// device node created, removed, renamed or re-permissioned, no signal sent to cudoctor; it
// dies with cudoctor; it inherits no descriptor but its reply pipe. Whatever it starts is
// collected and killed when it ends (cudoctor is a child subreaper).
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::runtime {

struct ChildRun {
  snapshot::ChildOutcome outcome;
  std::string payload;  // what the child's function returned; complete only when status is ok
};

using ChildFn = std::function<std::string()>;

// Runs fn in a child process. The child's stdout and stderr go to /dev/null so a chatty
// library cannot corrupt our output. status: ok, crashed, timeout, exited (the child ended
// without delivering, e.g. a library called exit()), bad_reply (it delivered something
// that is not a reply) or failed_to_start. A Ctrl-C kills the children, then cudoctor.
ChildRun run_in_child(const ChildFn& fn, std::chrono::milliseconds timeout);

// Children started together and collected together, under one deadline that starts at
// construction; wait() may come later, while other children run (NVML while L4 and L5 go
// on). The destructor waits if wait() was not called.
class ChildSet {
 public:
  ChildSet(const std::vector<ChildFn>& fns, std::chrono::milliseconds timeout, const std::vector<int>& keep_fds = {});
  ~ChildSet();
  ChildSet(const ChildSet&) = delete;
  ChildSet& operator=(const ChildSet&) = delete;
  std::vector<ChildRun> wait();

 private:
  struct State;
  std::unique_ptr<State> m;
};

// Runs every fn in its own child at once, under one deadline. keep_fds are descriptors the
// children keep open (all others but their reply pipe are closed in the child).
std::vector<ChildRun> run_in_children(const std::vector<ChildFn>& fns, std::chrono::milliseconds timeout,
                                      const std::vector<int>& keep_fds = {});

// In the child: names the vendor call about to be made, so that a child killed at its
// deadline or by a signal is reported with the call it was in (ChildOutcome::last_call).
void note_call(const char* name);

// In the child: the JSON text of a reply. Bytes that are not UTF-8 (a vendor's name
// string) become U+FFFD instead of an exception.
inline std::string reply(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
// In the child: the reply of a child that could not load its library or find its entry
// points (parse_reply makes it outcome load_failed).
inline std::string load_error_reply(const std::string& message) {
  return reply({{"load_error", message}});
}
// In the child: the reply of a child whose own code threw (outcome child_error).
inline std::string child_error_reply(const std::string& message) {
  return reply({{"child_exception", message}});
}

// Turns a child's JSON reply into facts of type T (which has an `outcome`), keeping the
// child's outcome. A load_error_reply becomes outcome load_failed, a child_error_reply
// child_error (with default facts), unparsable JSON bad_reply.
template <typename T>
T parse_reply(const ChildRun& run) {
  using snapshot::ChildStatus;
  T facts;
  facts.outcome = run.outcome;
  if (run.outcome.status != ChildStatus::ok) return facts;
  try {
    const auto j = nlohmann::json::parse(run.payload);
    if (j.contains("load_error")) {
      facts.outcome.status = ChildStatus::load_failed;
      facts.outcome.message = j["load_error"].template get<std::string>();
      return facts;
    }
    if (j.contains("child_exception")) {
      facts.outcome.status = ChildStatus::child_error;
      facts.outcome.message = j["child_exception"].template get<std::string>();
      return facts;
    }
    facts = j.template get<T>();
    facts.outcome = run.outcome;
  } catch (const nlohmann::json::exception& e) {
    facts.outcome.status = ChildStatus::bad_reply;
    facts.outcome.message = e.what();
  }
  return facts;
}

}  // namespace cudoctor::runtime
