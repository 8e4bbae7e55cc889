#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "cudoctor/runtime/child.hpp"
#include "cudoctor/runtime/child_sandbox.hpp"
#include "cudoctor/runtime/reaping_linux.hpp"
#include "cudoctor/runtime/reply_frame.hpp"

namespace cudoctor::runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_reply = 64u << 20;  // no honest probe says this much

std::atomic<int> g_in_flight{0};
int g_probe_child = 0;      // 1 in a probe child
std::vector<pid_t> g_live;  // probe children not yet reaped, of every ChildSet

// Each child's "last call" slot, in memory shared with the parent (it survives a child that
// closes its descriptors or is killed).
constexpr std::size_t k_call_slot = 96;
char* g_call_slot = nullptr;
volatile sig_atomic_t g_interrupt = 0;

// Ctrl-C, SIGTERM or SIGHUP while probe children run: the children and everything they
// started are killed first, then cudoctor dies of the same signal. With none running, the
// signal acts at once.
void on_interrupt(int sig) {
  if (g_in_flight.load() == 0) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_interrupt = sig;
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Orphans of a probe child (a library's helper that called setsid) come back to us,
    // so they can be killed instead of outliving cudoctor.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    // Children are reaped by us: an inherited SIGCHLD=SIG_IGN would reap them behind our back.
    ::signal(SIGCHLD, SIG_DFL);
    // No process of the same user (a probe child included) may read or write our memory
    // through /proc/PID/mem, whatever kernel.yama.ptrace_scope says.
    ::prctl(PR_SET_DUMPABLE, 0);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;  // nohup stays nohup
      struct sigaction sa {};
      sa.sa_handler = on_interrupt;  // no SA_RESTART: poll() returns EINTR
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// Writes all of data, unless the pipe breaks.
void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

struct Running {
  pid_t pid = -1;
  int fd = -1;
  std::string data;
  bool reaped = false;
  bool killed_at_deadline = false;
  int status = 0;
};

// Reaps c if it has exited, killing its process group first: while the zombie is not
// reaped its pid (and so the group's id) cannot be given to another process.
void reap_if_exited(Running& c) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno == ECHILD) c.reaped = true;  // reaped by someone else: nothing left to wait for
    return;
  }
  if (info.si_pid != c.pid) return;
  ::kill(-c.pid, SIGKILL);
  while (::waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
  }
  c.reaped = true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

ChildRun outcome_of(Running& c, std::chrono::milliseconds timeout, Clock::time_point start) {
  ChildRun run;
  run.outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const auto state = frame_state(c.data, &run.payload);
  if (state == Frame::complete) {
    run.outcome.status = snapshot::ChildStatus::ok;  // delivered: how the child ended afterwards does not matter
  } else if (c.killed_at_deadline) {
    run.outcome.status = snapshot::ChildStatus::timeout;
    run.outcome.message = "killed after " + std::to_string(timeout.count()) + " ms";
  } else if (c.reaped && WIFSIGNALED(c.status)) {
    run.outcome.status = snapshot::ChildStatus::crashed;
    run.outcome.signal = WTERMSIG(c.status);
    run.outcome.message = std::string("killed by signal ") + std::to_string(WTERMSIG(c.status)) + " (" +
                          ::strsignal(WTERMSIG(c.status)) + ")";
  } else if (state == Frame::malformed || c.data.size() > k_max_reply) {
    run.outcome.status = snapshot::ChildStatus::bad_reply;
    run.outcome.message =
        "the child's reply pipe carried " + std::to_string(c.data.size()) + " bytes that are not a reply";
  } else {
    run.outcome.status = snapshot::ChildStatus::exited;
    run.outcome.exit_code = WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
    run.outcome.message = "exited with code " + std::to_string(run.outcome.exit_code) + " before reporting";
  }
  if (!run.payload.empty() && run.outcome.status != snapshot::ChildStatus::ok) run.payload.clear();
  return run;
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer's check at exit stops the world with ptrace, which a probe child may not
// use: a child that a library makes exit() would die of the failed check instead.
extern "C" int __lsan_is_turned_off() {
  return g_probe_child;
}
#endif

void note_call(const char* name) {
  if (!g_call_slot) return;
  std::strncpy(g_call_slot, name, k_call_slot - 1);
  g_call_slot[k_call_slot - 1] = '\0';
}

struct ChildSet::State {
  std::chrono::milliseconds timeout{0};
  Clock::time_point start, deadline;
  std::vector<Running> kids;
  std::vector<std::string> start_errors;
  void* slots = nullptr;
  std::size_t slot_bytes = 0;
  bool waited = false;
  char* slot(std::size_t i) const { return slots ? static_cast<char*>(slots) + i * k_call_slot : nullptr; }
};

namespace {

// In the child, after fork: the sandbox, then fn, then its reply. Never returns.
[[noreturn]] void run_child(const ChildFn& fn, int reply_fd, pid_t parent, pid_t parent_group,
                            const std::vector<int>& keep_fds, char* call_slot) {
  g_probe_child = 1;
  const int entered = enter_child_sandbox(parent, parent_group, reply_fd, keep_fds);
  if (entered == -1) ::_exit(127);
  if (entered == -2) {
    // Fail closed: no vendor code runs outside the sandbox.
    write_all(reply_fd, framed(load_error_reply("the probe sandbox could not be set up (seccomp)")));
    ::_exit(0);
  }
  g_call_slot = call_slot;
  std::string payload;
  try {
    payload = fn();
  } catch (const std::exception& e) {
    payload = child_error_reply(e.what());
  }
  write_all(reply_fd, framed(payload));
  ::_exit(0);  // no atexit handlers or static destructors of the vendor library
}

// Reads what the children whose pipes poll() found ready have sent.
void read_ready(std::vector<Running>& kids, const std::vector<pollfd>& polls, const std::vector<std::size_t>& owners) {
  for (std::size_t k = 0; k < polls.size(); ++k) {
    if (!(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    auto& c = kids[owners[k]];
    char buf[65536];
    const auto got = ::read(c.fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      close_fd(c.fd);
      continue;
    }
    c.data.append(buf, static_cast<std::size_t>(got));
    if (c.data.size() > k_max_reply || frame_state(c.data, nullptr) == Frame::malformed) close_fd(c.fd);
  }
}

enum class Round { again, done, deadline };

// One round of reaping, polling and reading.
Round read_round(std::vector<Running>& kids, Clock::time_point deadline) {
  bool pending = false, waiting_exit = false;
  std::vector<pollfd> polls;
  std::vector<std::size_t> owners;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    auto& c = kids[i];
    if (c.pid < 0) continue;
    if (!c.reaped) reap_if_exited(c);
    if (c.fd >= 0) {
      polls.push_back({c.fd, POLLIN, 0});
      owners.push_back(i);
    }
    if (!c.reaped) {
      pending = true;
      if (c.fd < 0) waiting_exit = true;
    }
  }
  // A reaped child's pipe may still hold its reply: read what is there before leaving.
  if (!pending && polls.empty()) return Round::done;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  // Past the deadline, what is already in the pipes still counts (wait() can come late,
  // after other probes): one last pass reads it without waiting.
  const bool last_pass = left.count() <= 0;
  int wait_ms = last_pass ? 0 : static_cast<int>(std::min<long>(left.count(), 1000));
  if (waiting_exit || !pending) wait_ms = std::min(wait_ms, 5);
  const int n = ::poll(polls.data(), polls.size(), wait_ms);
  if (n < 0 && errno == EINTR && !last_pass) return Round::again;
  if (last_pass && n <= 0) return Round::deadline;
  if (n > 0) read_ready(kids, polls, owners);
  // A reaped child whose pipe went quiet has said all it will: stop waiting for EOF
  // (a helper it started may hold the pipe open).
  for (auto& c : kids)
    if (c.reaped && c.fd >= 0 && frame_state(c.data, nullptr) == Frame::complete) close_fd(c.fd);
  if (!pending)
    for (auto& c : kids)
      if (c.fd >= 0) {
        pollfd p{c.fd, POLLIN, 0};
        if (::poll(&p, 1, 0) == 0) close_fd(c.fd);
      }
  return Round::again;
}

// Whatever is left dies now, with its process group (the groups of those already reaped
// died with them: their pids may belong to someone else by now).
void kill_the_rest(std::vector<Running>& kids, bool timed_out) {
  for (auto& c : kids) {
    if (c.pid < 0 || c.reaped) continue;
    c.killed_at_deadline = timed_out;
    ::kill(-c.pid, SIGKILL);
    ::kill(c.pid, SIGKILL);
  }
  const auto reap_deadline = Clock::now() + std::chrono::seconds(1);
  for (auto& c : kids)
    if (c.pid >= 0 && !c.reaped) c.reaped = reap_until(c.pid, c.status, reap_deadline);
  for (auto& c : kids) {
    close_fd(c.fd);
    if (c.reaped) g_live.erase(std::remove(g_live.begin(), g_live.end(), c.pid), g_live.end());
  }
}

// After an interrupt: every other probe child still running goes too, before the orphans
// are collected.
void kill_every_live_child() {
  for (const pid_t p : g_live) {
    ::kill(-p, SIGKILL);
    ::kill(p, SIGKILL);
  }
  g_live.clear();
}

}  // namespace

ChildSet::ChildSet(const std::vector<ChildFn>& fns, std::chrono::milliseconds timeout, const std::vector<int>& keep_fds)
    : m(std::make_unique<State>()) {
  install_once();
  m->timeout = timeout;
  m->start = Clock::now();
  m->deadline = m->start + timeout;
  m->kids.resize(fns.size());
  m->start_errors.resize(fns.size());
  const pid_t parent = ::getpid();
  const pid_t parent_group = ::getpgrp();
  m->slot_bytes = k_call_slot * std::max<std::size_t>(fns.size(), 1);
  m->slots = ::mmap(nullptr, m->slot_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m->slots == MAP_FAILED) m->slots = nullptr;
  ++g_in_flight;
  for (std::size_t i = 0; i < fns.size(); ++i) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      m->start_errors[i] = std::string("pipe: ") + std::strerror(errno);
      continue;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      m->start_errors[i] = std::string("fork: ") + std::strerror(errno);
      ::close(fds[0]);
      ::close(fds[1]);
      continue;
    }
    if (pid == 0) run_child(fns[i], fds[1], parent, parent_group, keep_fds, m->slot(i));
    ::close(fds[1]);
    m->kids[i].pid = pid;
    m->kids[i].fd = fds[0];
    g_live.push_back(pid);
  }
}

ChildSet::~ChildSet() {
  if (m && !m->waited) wait();
}

std::vector<ChildRun> ChildSet::wait() {
  m->waited = true;
  auto& kids = m->kids;
  bool timed_out = false;
  int interrupted = 0;
  for (;;) {
    if (g_interrupt) {
      interrupted = g_interrupt;
      break;
    }
    const auto round = read_round(kids, m->deadline);
    if (round == Round::again) continue;
    timed_out = round == Round::deadline;
    break;
  }
  kill_the_rest(kids, timed_out);
  if (!interrupted) interrupted = g_interrupt;  // a Ctrl-C during the clean-up counts too
  if (interrupted) kill_every_live_child();
  kill_orphans(g_live);
  --g_in_flight;
  if (interrupted) {
    // cudoctor dies of the signal it was sent, now that nothing of it is left running.
    ::signal(interrupted, SIG_DFL);
    ::raise(interrupted);
  }
  std::vector<ChildRun> runs(kids.size());
  for (std::size_t i = 0; i < kids.size(); ++i) {
    if (!m->start_errors[i].empty()) {
      runs[i].outcome.status = snapshot::ChildStatus::failed_to_start;
      runs[i].outcome.message = m->start_errors[i];
      continue;
    }
    runs[i] = outcome_of(kids[i], m->timeout, m->start);
    if (m->slots && runs[i].outcome.status != snapshot::ChildStatus::ok)
      runs[i].outcome.last_call.assign(m->slot(i), ::strnlen(m->slot(i), k_call_slot));
    if (!kids[i].reaped) runs[i].outcome.message += " (the process could not be killed: it is stuck in the kernel)";
  }
  if (m->slots) ::munmap(m->slots, m->slot_bytes);
  m->slots = nullptr;
  return runs;
}

std::vector<ChildRun> run_in_children(const std::vector<ChildFn>& fns, std::chrono::milliseconds timeout,
                                      const std::vector<int>& keep_fds) {
  return ChildSet(fns, timeout, keep_fds).wait();
}

ChildRun run_in_child(const ChildFn& fn, std::chrono::milliseconds timeout) {
  return run_in_children({fn}, timeout).front();
}

}  // namespace cudoctor::runtime
