#pragma once
// Reaping probe children and whatever they leave behind (child_linux.cpp's clean-up).
#include <sys/types.h>

#include <chrono>
#include <vector>

namespace cudoctor::runtime {

// Waits for pid until the deadline; true when it was reaped (status then holds how it ended).
bool reap_until(pid_t pid, int& status, std::chrono::steady_clock::time_point deadline);

// Kills whatever the probe children left behind: processes reparented to us because we are
// a subreaper (a library's helper that left the child's process group), except the live
// probe children of other sets. Killing one can orphan its own children to us, so this
// repeats until none is left (for at most 2 s).
void kill_orphans(const std::vector<pid_t>& live);

}  // namespace cudoctor::runtime
