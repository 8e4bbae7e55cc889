#pragma once
// What a probe child does to itself before it runs vendor code; see child.hpp.
#include <sys/types.h>

#include <vector>

namespace cudoctor::runtime {

// Called in the child right after fork: dies with the parent (PR_SET_PDEATHSIG), its own
// process group, default signal actions, /dev/null for stdin/stdout/stderr, every other
// descriptor but reply_fd and keep_fds closed, no new privileges, no core file and a
// memory limit, no CAP_MKNOD, and a seccomp filter (no exec, no file-system changes, no
// signal to the parent). False when the parent is already gone.
bool enter_child_sandbox(pid_t parent, pid_t parent_group, int reply_fd, const std::vector<int>& keep_fds);

}  // namespace cudoctor::runtime
