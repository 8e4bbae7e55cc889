#include <dirent.h>
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
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cudoctor/runtime/child.hpp"
#include "cudoctor/runtime/child_sandbox.hpp"

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

// The payload travels as "<length>\n<bytes>": a reply is complete when its length has
// arrived, whether or not the pipe is ever closed (a helper process may hold it open).
void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

enum class Reply { partial, complete, malformed };

Reply reply_state(const std::string& data, std::string* payload) {
  const auto nl = data.find('\n');
  if (nl == std::string::npos) return data.size() > 20 ? Reply::malformed : Reply::partial;
  if (nl == 0 || nl > 20 ||
      !std::all_of(data.begin(), data.begin() + static_cast<long>(nl), [](char c) { return c >= '0' && c <= '9'; }))
    return Reply::malformed;
  const auto len = std::strtoull(data.substr(0, nl).c_str(), nullptr, 10);
  const auto have = data.size() - nl - 1;
  if (have < len) return Reply::partial;
  if (have > len) return Reply::malformed;  // something else wrote into the pipe too
  if (payload) *payload = data.substr(nl + 1);
  return Reply::complete;
}

std::vector<pid_t> children_of_self() {
  std::vector<pid_t> out;
  const auto self = std::to_string(::getpid());
  if (DIR* d = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
      std::ifstream f("/proc/" + name + "/stat");
      std::string stat((std::istreambuf_iterator<char>(f)), {});
      // pid (comm) state ppid …; comm may hold spaces and parentheses: take the last ')'.
      const auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 1));
      std::string state, ppid;
      rest >> state >> ppid;
      if (ppid == self) out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    ::closedir(d);
  }
  return out;
}

// Waits for pid until the deadline; true when it was reaped.
bool reap_until(pid_t pid, int& status, Clock::time_point deadline) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return errno == ECHILD;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Kills whatever the probe children left behind: processes reparented to us because we are
// a subreaper (a library's helper that left the child's process group). Killing one can
// orphan its own children to us, so this repeats until none is left.
void kill_orphans() {
  // Bounded in time, not in depth: a chain of nested helpers unwinds one level a round.
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  for (int round = 0; round < 1024 && Clock::now() < give_up; ++round) {
    auto orphans = children_of_self();
    // Children of another set still running are not orphans.
    std::erase_if(orphans, [](pid_t p) { return std::find(g_live.begin(), g_live.end(), p) != g_live.end(); });
    if (orphans.empty()) return;
    for (const pid_t p : orphans) {
      ::kill(-p, SIGKILL);
      ::kill(p, SIGKILL);
    }
    int status = 0;
    const auto deadline = Clock::now() + std::chrono::milliseconds(500);
    for (const pid_t p : orphans) reap_until(p, status, deadline);
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
  const auto state = reply_state(c.data, &run.payload);
  if (state == Reply::complete) {
    run.outcome.status = "ok";  // delivered: how the child ended afterwards does not matter
  } else if (c.killed_at_deadline) {
    run.outcome.status = "timeout";
    run.outcome.message = "killed after " + std::to_string(timeout.count()) + " ms";
  } else if (c.reaped && WIFSIGNALED(c.status)) {
    run.outcome.status = "crashed";
    run.outcome.signal = WTERMSIG(c.status);
    run.outcome.message = std::string("killed by signal ") + std::to_string(WTERMSIG(c.status)) + " (" +
                          ::strsignal(WTERMSIG(c.status)) + ")";
  } else if (state == Reply::malformed || c.data.size() > k_max_reply) {
    run.outcome.status = "bad_reply";
    run.outcome.message =
        "the child's reply pipe carried " + std::to_string(c.data.size()) + " bytes that are not a reply";
  } else {
    run.outcome.status = "exited";
    run.outcome.exit_code = WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
    run.outcome.message = "exited with code " + std::to_string(run.outcome.exit_code) + " before reporting";
  }
  if (!run.payload.empty() && run.outcome.status != "ok") run.payload.clear();
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
    if (pid == 0) {
      g_probe_child = 1;
      int reply = fds[1];
      const int entered = enter_child_sandbox(parent, parent_group, reply, keep_fds);
      if (entered == -1) ::_exit(127);
      if (entered == -2) {
        // Fail closed: no vendor code runs outside the sandbox.
        const std::string refusal = R"j({"load_error":"the probe sandbox could not be set up (seccomp)"})j";
        write_all(reply, std::to_string(refusal.size()) + "\n" + refusal);
        ::_exit(0);
      }
      g_call_slot = m->slot(i);
      std::string payload;
      try {
        payload = fns[i]();
      } catch (const std::exception& e) {
        payload = nlohmann::json{{"child_exception", e.what()}}.dump(-1, ' ', false,
                                                                     nlohmann::json::error_handler_t::replace);
      }
      write_all(reply, std::to_string(payload.size()) + "\n" + payload);
      ::_exit(0);  // no atexit handlers or static destructors of the vendor library
    }
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
  const auto deadline = m->deadline;
  std::vector<ChildRun> runs(kids.size());
  bool timed_out = false;
  int interrupted = 0;
  for (;;) {
    if (g_interrupt) {
      interrupted = g_interrupt;
      break;
    }
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
    if (!pending && polls.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // Past the deadline, what is already in the pipes still counts (wait() can come late,
    // after other probes): one last pass reads it without waiting.
    const bool last_pass = left.count() <= 0;
    int wait_ms = last_pass ? 0 : static_cast<int>(std::min<long>(left.count(), 1000));
    if (waiting_exit || !pending) wait_ms = std::min(wait_ms, 5);
    const int n = ::poll(polls.data(), polls.size(), wait_ms);
    if (n < 0 && errno == EINTR && !last_pass) continue;
    if (last_pass && n <= 0) {
      timed_out = true;
      break;
    }
    for (std::size_t k = 0; n > 0 && k < polls.size(); ++k) {
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
      if (c.data.size() > k_max_reply || reply_state(c.data, nullptr) == Reply::malformed) close_fd(c.fd);
    }
    // A reaped child whose pipe went quiet has said all it will: stop waiting for EOF
    // (a helper it started may hold the pipe open).
    for (auto& c : kids)
      if (c.reaped && c.fd >= 0 && reply_state(c.data, nullptr) == Reply::complete) close_fd(c.fd);
    if (!pending)
      for (auto& c : kids)
        if (c.fd >= 0) {
          pollfd p{c.fd, POLLIN, 0};
          if (::poll(&p, 1, 0) == 0) close_fd(c.fd);
        }
  }

  // Whatever is left dies now, with its process group (the groups of those already reaped
  // died with them: their pids may belong to someone else by now); then the orphans.
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
  if (!interrupted) interrupted = g_interrupt;  // a Ctrl-C during the clean-up counts too
  if (interrupted) {
    // Every other probe child still running goes too, before the orphans are collected.
    for (const pid_t p : g_live) {
      ::kill(-p, SIGKILL);
      ::kill(p, SIGKILL);
    }
    g_live.clear();
  }
  kill_orphans();
  --g_in_flight;
  if (interrupted) {
    // cudoctor dies of the signal it was sent, now that nothing of it is left running.
    ::signal(interrupted, SIG_DFL);
    ::raise(interrupted);
  }

  for (std::size_t i = 0; i < kids.size(); ++i) {
    if (!m->start_errors[i].empty()) {
      runs[i].outcome.status = "failed_to_start";
      runs[i].outcome.message = m->start_errors[i];
      continue;
    }
    runs[i] = outcome_of(kids[i], m->timeout, m->start);
    if (m->slots && runs[i].outcome.status != "ok")
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
