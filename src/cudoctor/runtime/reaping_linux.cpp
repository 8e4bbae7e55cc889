#include "cudoctor/runtime/reaping_linux.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <string>
#include <thread>

namespace cudoctor::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// The file's first 4 KiB; "" when it cannot be opened or read.
std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf - out.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() >= sizeof buf) break;
  }
  ::close(fd);
  return out;
}

// Our children, read from /proc (every process whose parent is us).
std::vector<pid_t> children_of_self() {
  std::vector<pid_t> out;
  const auto self = std::to_string(::getpid());
  if (DIR* d = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
      // A process that exits while it is read makes read() fail (ESRCH): it is no child of
      // ours any more. open/read, not an ifstream, whose underflow throws on that error.
      const std::string stat = read_small("/proc/" + name + "/stat");
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

}  // namespace

bool reap_until(pid_t pid, int& status, Clock::time_point deadline) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return errno == ECHILD;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void kill_orphans(const std::vector<pid_t>& live) {
  // Bounded in time, not in depth: a chain of nested helpers unwinds one level a round.
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  for (int round = 0; round < 1024 && Clock::now() < give_up; ++round) {
    auto orphans = children_of_self();
    // Children of another set still running are not orphans.
    std::erase_if(orphans, [&](pid_t p) { return std::find(live.begin(), live.end(), p) != live.end(); });
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

}  // namespace cudoctor::runtime
