#pragma once
// What a probe child does to itself before it runs vendor code; see child.hpp.
#include <sys/types.h>

#include <vector>

namespace cudoctor::runtime {

// Called in the child right after fork: dies with the parent (PR_SET_PDEATHSIG), a session
// of its own (no controlling terminal), default signal actions, /dev/null for stdin, stdout
// and stderr, every other descriptor but the reply pipe and keep_fds closed, no new
// privileges, no core file and a memory limit, no CAP_MKNOD, CAP_SYS_PTRACE, CAP_KILL or
// CAP_SYS_MODULE, and a seccomp filter (no exec, no file-system changes, nothing that
// reaches the parent). reply_fd is moved above 2 if it was not. Returns 0, -1 when the
// parent is already gone, -2 when the filter could not be installed.
int enter_child_sandbox(pid_t parent, pid_t parent_group, int& reply_fd, const std::vector<int>& keep_fds);

}  // namespace cudoctor::runtime
