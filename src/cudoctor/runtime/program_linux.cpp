#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cudoctor/runtime/program.hpp"
#include "cudoctor/runtime/reaping_linux.hpp"

namespace cudoctor::runtime {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_max_out = 8u << 20;
constexpr std::size_t k_err_tail = 4096;

struct Running {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  int status = -1;  // the exec's errno comes back here when it fails (CLOEXEC: EOF when it works)
  bool reaped = false;
  int wait_status = 0;
  Clock::time_point start;
  ProgramRun run;
};

// Moves fd to 10 or above (CLOEXEC), so that the dup2 onto 0, 1 and 2 never meets it there.
int high(int fd) {
  return ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

[[noreturn]] void fail(int status_w, int err) {
  (void)!::write(status_w, &err, sizeof err);
  ::_exit(127);
}

[[noreturn]] void child(const Program& p, int out_w, int err_w, int status_w, pid_t parent) {
  ::setsid();  // its own session and process group: killed as one
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const int null = high(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  out_w = high(out_w);
  err_w = high(err_w);
  status_w = high(status_w);
  if (null < 0 || out_w < 0 || err_w < 0 || status_w < 0) ::_exit(126);
  // dup2 onto another number clears CLOEXEC: these three, and only these, survive the exec.
  if (::dup2(null, 0) < 0 || ::dup2(out_w, 1) < 0 || ::dup2(err_w, 2) < 0) fail(status_w, errno);
  if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
    rlimit lim{};
    const int n =
        ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536 ? static_cast<int>(lim.rlim_cur) : 65536;
    for (int fd = 3; fd < n; ++fd)
      if (fd != status_w) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // Not the directory cudoctor was started in: `python -c` imports from its working directory.
  if (::chdir("/") != 0) fail(status_w, errno);
  if (p.uid >= 0) {
    // A user's code runs as that user: no supplementary groups, their gid and uid, for good.
    if (::setgroups(0, nullptr) != 0 || ::setgid(static_cast<gid_t>(p.gid)) != 0 ||
        ::setuid(static_cast<uid_t>(p.uid)) != 0)
      fail(status_w, errno);
  }
  // After the change of user, which clears it: the program dies with cudoctor.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(126);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  std::vector<char*> argv, envp;
  for (const auto& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : p.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  ::execve(argv[0], argv.data(), envp.data());
  fail(status_w, errno);
}

void drain(int& fd, std::string& into, bool tail) {
  char buf[65536];
  const auto n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    ::close(fd);
    fd = -1;
    return;
  }
  into.append(buf, static_cast<std::size_t>(n));
  if (tail && into.size() > 2 * k_err_tail) into.erase(0, into.size() - k_err_tail);
  // The reply comes last: a chatty program loses its beginning, not the reply.
  if (!tail && into.size() > k_max_out) into.erase(0, into.size() - k_max_out);
}

void finish(Running& r, bool timed_out) {
  auto& o = r.run.outcome;
  o.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  if (r.run.err_tail.size() > k_err_tail) r.run.err_tail.erase(0, r.run.err_tail.size() - k_err_tail);
  int err = 0;
  if (r.status >= 0 && ::read(r.status, &err, sizeof err) == static_cast<ssize_t>(sizeof err)) {
    o.status = snapshot::ChildStatus::failed_to_start;
    o.message = std::strerror(err);
  } else if (timed_out) {
    o.status = snapshot::ChildStatus::timeout;
  } else if (WIFSIGNALED(r.wait_status)) {
    o.status = snapshot::ChildStatus::crashed;
    o.signal = WTERMSIG(r.wait_status);
  } else if (WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0) {
    o.status = snapshot::ChildStatus::ok;
  } else {
    o.status = snapshot::ChildStatus::exited;
    o.exit_code = WIFEXITED(r.wait_status) ? WEXITSTATUS(r.wait_status) : -1;
  }
}

}  // namespace

std::vector<ProgramRun> run_programs(const std::vector<Program>& programs, std::chrono::milliseconds timeout) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::vector<Running> rs(programs.size());
  const auto deadline = Clock::now() + timeout;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    auto& r = rs[i];
    r.start = Clock::now();
    int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1};
    if (programs[i].argv.empty() || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
        ::pipe2(status, O_CLOEXEC) != 0) {
      for (const int fd : {out[0], out[1], err[0], err[1], status[0], status[1]})
        if (fd >= 0) ::close(fd);
      r.run.outcome.status = snapshot::ChildStatus::failed_to_start;
      continue;
    }
    const pid_t parent = ::getpid();
    r.pid = ::fork();
    if (r.pid == 0) child(programs[i], out[1], err[1], status[1], parent);
    ::close(out[1]), ::close(err[1]), ::close(status[1]);
    if (r.pid < 0) {
      ::close(out[0]), ::close(err[0]), ::close(status[0]);
      r.run.outcome.status = snapshot::ChildStatus::failed_to_start;
      r.run.outcome.message = std::strerror(errno);
      continue;
    }
    r.out = out[0];
    r.err = err[0];
    r.status = status[0];
  }
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Running*, bool>> owners;  // (program, is stderr)
    for (auto& r : rs) {
      if (r.out >= 0) fds.push_back({r.out, POLLIN, 0}), owners.emplace_back(&r, false);
      if (r.err >= 0) fds.push_back({r.err, POLLIN, 0}), owners.emplace_back(&r, true);
    }
    if (fds.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (std::size_t k = 0; k < fds.size(); ++k)
      if (fds[k].revents) {
        auto& [r, is_err] = owners[k];
        drain(is_err ? r->err : r->out, is_err ? r->run.err_tail : r->run.out, is_err);
      }
  }
  for (auto& r : rs) {
    if (r.pid <= 0) continue;
    r.reaped = reap_until(r.pid, r.wait_status, deadline);
    if (!r.reaped) {
      ::kill(-r.pid, SIGKILL);
      ::kill(r.pid, SIGKILL);
      ::waitpid(r.pid, &r.wait_status, 0);
    } else {
      ::kill(-r.pid, SIGKILL);  // what it left running in its group
    }
    finish(r, !r.reaped);
    for (int* fd : {&r.out, &r.err, &r.status})
      if (*fd >= 0) ::close(*fd), *fd = -1;
  }
  // What left the programs' process groups came back to us (a subreaper): killed too.
  kill_orphans({});
  std::vector<ProgramRun> out;
  for (auto& r : rs) out.push_back(std::move(r.run));
  return out;
}

}  // namespace cudoctor::runtime
