#include <fcntl.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "cudoctor/runtime/child_sandbox.hpp"

namespace cudoctor::runtime {
namespace {

// NVIDIA's user-space libraries, run as root, create missing /dev/nvidia* nodes themselves.
// cudoctor writes nothing to the system, so the child gives up CAP_MKNOD (the library then
// sees what an ordinary user would), and the powers a probe never needs that would reach
// other processes: tracing or writing their memory, signalling them, loading modules.
void drop_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return;
  for (const int cap : {CAP_MKNOD, CAP_SYS_PTRACE, CAP_KILL, CAP_SYS_MODULE}) {
    const unsigned bit = 1u << (cap % 32);
    auto& word = data[cap / 32];
    word.effective &= ~bit;
    word.permitted &= ~bit;
    word.inheritable &= ~bit;
  }
  ::syscall(SYS_capset, &header, data);
}

// Every descriptor but the reply pipe and keep_fds is closed: a library must not write into
// a sibling child's reply pipe, nor keep one of ours open.
void close_inherited(int reply_fd, const std::vector<int>& keep_fds) {
  const int max = static_cast<int>(std::min<long>(::sysconf(_SC_OPEN_MAX), 65536));
  for (int fd = 3; fd < max; ++fd) {
    if (fd == reply_fd || std::find(keep_fds.begin(), keep_fds.end(), fd) != keep_fds.end()) continue;
    ::close(fd);
  }
}

void limit_resources() {
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
#if !defined(__SANITIZE_ADDRESS__)
  // A leaking library must not take the machine's memory: half of it at most (under ASan
  // the shadow memory alone is larger, so no limit there).
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    const auto half = static_cast<rlim_t>(pages) * static_cast<rlim_t>(page) / 2;
    const rlim_t floor = rlim_t{4} << 30;
    const rlimit data{std::max(half, floor), std::max(half, floor)};
    ::setrlimit(RLIMIT_DATA, &data);
  }
#endif
}

// The seccomp filter: what a probe of a vendor library never needs and must not do. Each
// denied call fails with EPERM, which the libraries already handle (an ordinary user's
// run sees the same). Reading, ioctls on /dev/nvidia*, mmap, shared memory and threads
// stay allowed. Returns false when the filter could not be installed.
bool install_filter(pid_t parent, pid_t parent_group) {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return false;
  // Names a kernel or libseccomp does not know resolve to a negative number: skipped.
  const auto deny = [&](int nr) {
    if (nr >= 0) ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
  };
  // No program runs: not nvidia-modprobe (setuid; it would load the module and create
  // nodes as a side effect), not a shell.
  for (const int nr : {SCMP_SYS(execve), SCMP_SYS(execveat)}) deny(nr);
  // Nothing in the file system is created, removed, renamed, linked or re-permissioned (as
  // root the real NVML replaces /dev/char/195:255); no mount, no io_uring (whose requests
  // would bypass all of this).
  for (const int nr : {SCMP_SYS(unlink),     SCMP_SYS(unlinkat),    SCMP_SYS(rmdir),        SCMP_SYS(rename),
                       SCMP_SYS(renameat),   SCMP_SYS(renameat2),   SCMP_SYS(symlink),      SCMP_SYS(symlinkat),
                       SCMP_SYS(link),       SCMP_SYS(linkat),      SCMP_SYS(mknod),        SCMP_SYS(mknodat),
                       SCMP_SYS(mkdir),      SCMP_SYS(mkdirat),     SCMP_SYS(chmod),        SCMP_SYS(fchmod),
                       SCMP_SYS(fchmodat),   SCMP_SYS(chown),       SCMP_SYS(fchown),       SCMP_SYS(lchown),
                       SCMP_SYS(fchownat),   SCMP_SYS(truncate),    SCMP_SYS(mount),        SCMP_SYS(umount2),
                       SCMP_SYS(chroot),     SCMP_SYS(pivot_root),  SCMP_SYS(fsopen),       SCMP_SYS(fsmount),
                       SCMP_SYS(move_mount), SCMP_SYS(open_tree),   SCMP_SYS(setxattr),     SCMP_SYS(lsetxattr),
                       SCMP_SYS(fsetxattr),  SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(io_uring_setup)})
    deny(nr);
  // Nothing reaches cudoctor: no tracing or memory access, no joining its process group,
  // no signal by any route (kill, queued signals, a pidfd, SIGIO through F_SETOWN).
  for (const int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_writev), SCMP_SYS(process_vm_readv), SCMP_SYS(setpgid),
                       SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal)})
    deny(nr);
  // pid_t is 32 bits; whether the upper half of the register is sign-extended depends on
  // the caller, so only the lower half is compared.
  const auto deny_target = [&](int nr, pid_t target) {
    ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
                       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<std::uint32_t>(target)));
  };
  for (const int nr :
       {SCMP_SYS(kill), SCMP_SYS(tkill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    deny_target(nr, parent);
  deny_target(SCMP_SYS(kill), -parent);  // cudoctor's group, when it leads one
  deny_target(SCMP_SYS(kill), -parent_group);
  deny_target(SCMP_SYS(kill), -1);
  for (const int cmd : {F_SETOWN, F_SETOWN_EX})
    ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 1,
                       SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(cmd)));
  // No keystrokes pushed into a terminal (TIOCSTI), should one be reachable.
  ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<scmp_datum_t>(TIOCSTI)));
  const int rc = ::seccomp_load(ctx);
  ::seccomp_release(ctx);
  return rc == 0;
}

}  // namespace

int enter_child_sandbox(pid_t parent, pid_t parent_group, int& reply_fd, const std::vector<int>& keep_fds) {
  // Dies with cudoctor, even when cudoctor is killed with SIGKILL.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return -1;  // cudoctor died before the line above
  // A session of its own: no controlling terminal to push keys into, and its own process
  // group, so a timeout kills whatever the library started too.
  ::setsid();
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
  // The reply pipe moves above 2 first: cudoctor started with stdout or stderr closed may
  // have been handed descriptor 1 or 2 for it.
  if (reply_fd <= 2) reply_fd = ::fcntl(reply_fd, F_DUPFD_CLOEXEC, 3);
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    if (devnull > 2) ::close(devnull);
  }
  close_inherited(reply_fd, keep_fds);
  // setuid and file-capability programs run without their powers from here on.
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  limit_resources();
  drop_capabilities();
  if (!install_filter(parent, parent_group)) return -2;
  return 0;
}

}  // namespace cudoctor::runtime
