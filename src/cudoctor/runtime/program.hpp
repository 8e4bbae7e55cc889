#pragma once
// Running a program of the machine in a child process (check --deep runs each environment's
// interpreter): its own process group and session, stdin from /dev/null, killed with all it
// started at its deadline or when cudoctor dies, its output captured up to a cap. A crash,
// hang or exit of the program is an outcome, never a crash or hang of cudoctor.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::runtime {

struct Program {
  std::vector<std::string> argv;  // argv[0] is the absolute path run (no PATH search)
  std::vector<std::string> env;   // NAME=value, the whole environment
  // Run as this user (from root: the owner of the code it runs); uid -1 keeps ours.
  int uid = -1;
  int gid = -1;
};

struct ProgramRun {
  snapshot::ChildOutcome outcome;  // ok (exit 0), exited (its code), crashed (its signal), timeout, failed_to_start
  std::string out;                 // stdout, at most 8 MiB
  std::string err_tail;            // the last 4 KiB of stderr
};

// Runs every program at once under one deadline. Not while probe children run: what is left of
// cudoctor's children afterwards (orphans of the programs) is killed.
std::vector<ProgramRun> run_programs(const std::vector<Program>& programs, std::chrono::milliseconds timeout);

}  // namespace cudoctor::runtime
