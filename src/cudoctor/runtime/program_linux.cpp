#include <fcntl.h>
#include <grp.h>
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
  bool reaped = false;
  int status = 0;
  Clock::time_point start;
  ProgramRun run;
};

[[noreturn]] void child(const Program& p, int out_w, int err_w, pid_t parent) {
  ::setsid();  // its own session and process group: killed as one
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(126);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(out_w, 1) < 0 || ::dup2(err_w, 2) < 0) ::_exit(126);
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (p.uid >= 0) {
    // A user's code runs as that user: no supplementary groups, their uid and gid, for good.
    if (::setgroups(0, nullptr) != 0 || ::setgid(static_cast<gid_t>(p.gid)) != 0 ||
        ::setuid(static_cast<uid_t>(p.uid)) != 0) {
      const char msg[] = "cudoctor: could not drop to the owner's user\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(126);
    }
  }
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  std::vector<char*> argv, envp;
  for (const auto& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : p.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  ::execve(argv[0], argv.data(), envp.data());
  const std::string msg = std::string("cudoctor: cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
  (void)!::write(2, msg.data(), msg.size());
  ::_exit(127);
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
  if (!tail && into.size() > k_max_out) into.resize(k_max_out);
}

void finish(Running& r, bool timed_out) {
  auto& o = r.run.outcome;
  o.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  if (r.run.err_tail.size() > k_err_tail) r.run.err_tail.erase(0, r.run.err_tail.size() - k_err_tail);
  if (timed_out) {
    o.status = snapshot::ChildStatus::timeout;
  } else if (WIFSIGNALED(r.status)) {
    o.status = snapshot::ChildStatus::crashed;
    o.signal = WTERMSIG(r.status);
  } else if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) {
    o.status = snapshot::ChildStatus::ok;
  } else {
    o.status = snapshot::ChildStatus::exited;
    o.exit_code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
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
    int out[2], err[2];
    if (programs[i].argv.empty() || ::pipe2(out, O_CLOEXEC) != 0) {
      r.run.outcome.status = snapshot::ChildStatus::failed_to_start;
      continue;
    }
    if (::pipe2(err, O_CLOEXEC) != 0) {
      ::close(out[0]), ::close(out[1]);
      r.run.outcome.status = snapshot::ChildStatus::failed_to_start;
      continue;
    }
    const pid_t parent = ::getpid();
    r.pid = ::fork();
    if (r.pid == 0) child(programs[i], out[1], err[1], parent);
    ::close(out[1]), ::close(err[1]);
    if (r.pid < 0) {
      ::close(out[0]), ::close(err[0]);
      r.run.outcome.status = snapshot::ChildStatus::failed_to_start;
      r.run.outcome.message = std::strerror(errno);
      continue;
    }
    r.out = out[0];
    r.err = err[0];
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
    r.reaped = reap_until(r.pid, r.status, deadline);
    if (!r.reaped) {
      ::kill(-r.pid, SIGKILL);
      ::kill(r.pid, SIGKILL);
      ::waitpid(r.pid, &r.status, 0);
    } else {
      ::kill(-r.pid, SIGKILL);  // what it left running in its group
    }
    for (int* fd : {&r.out, &r.err})
      if (*fd >= 0) ::close(*fd), *fd = -1;
    finish(r, !r.reaped);
  }
  // What left the programs' process groups came back to us (a subreaper): killed too.
  kill_orphans({});
  std::vector<ProgramRun> out;
  for (auto& r : rs) out.push_back(std::move(r.run));
  return out;
}

}  // namespace cudoctor::runtime
