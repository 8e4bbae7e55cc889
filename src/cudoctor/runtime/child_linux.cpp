#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cudoctor/runtime/child.hpp"

namespace cudoctor::runtime {
namespace {

// The payload travels as "<length>\n<bytes>", so a child that dies mid-write is told apart
// from one that finished.
void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// NVIDIA's user-space libraries, run as root, create missing /dev/nvidia* nodes themselves.
// cudoctor writes nothing to the system, so the child gives up CAP_MKNOD: the library then
// sees what an ordinary user would. setuid helpers (nvidia-modprobe) keep their own powers.
void drop_mknod_capability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return;
  const unsigned bit = 1u << (CAP_MKNOD % 32);
  auto& word = data[CAP_MKNOD / 32];
  word.effective &= ~bit;
  word.permitted &= ~bit;
  word.inheritable &= ~bit;
  ::syscall(SYS_capset, &header, data);
}

}  // namespace

ChildRun run_in_child(const std::function<std::string()>& fn, std::chrono::milliseconds timeout) {
  ChildRun run;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    run.outcome.status = "failed_to_start";
    run.outcome.message = std::string("pipe: ") + std::strerror(errno);
    return run;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    run.outcome.status = "failed_to_start";
    run.outcome.message = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return run;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);  // its own group: a timeout kills whatever the library started too
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    drop_mknod_capability();
    std::string payload;
    try {
      payload = fn();
    } catch (const std::exception& e) {
      payload = std::string("{\"child_exception\":\"") + e.what() + "\"}";
    }
    write_all(fds[1], std::to_string(payload.size()) + "\n" + payload);
    ::_exit(0);  // no atexit handlers or static destructors of the vendor library
  }
  ::close(fds[1]);
  const auto deadline = start + timeout;
  std::string data;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[16384];
    const auto got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child ended or closed the pipe
    data.append(buf, static_cast<std::size_t>(got));
    if (data.size() > (64u << 20)) break;  // no honest probe says this much
  }
  ::close(fds[0]);
  if (timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const auto nl = data.find('\n');
  bool complete = false;
  if (nl != std::string::npos) {
    const auto len = std::strtoull(data.substr(0, nl).c_str(), nullptr, 10);
    complete = data.size() - nl - 1 == len;
    if (complete) run.payload = data.substr(nl + 1);
  }
  if (timed_out) {
    run.outcome.status = "timeout";
    run.outcome.message = "killed after " + std::to_string(timeout.count()) + " ms";
  } else if (WIFSIGNALED(status)) {
    run.outcome.status = "crashed";
    run.outcome.signal = WTERMSIG(status);
    run.outcome.message = std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                          ::strsignal(WTERMSIG(status)) + ")";
  } else if (complete) {
    run.outcome.status = "ok";
  } else {
    run.outcome.status = "exited";
    run.outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.outcome.message = "exited with code " + std::to_string(run.outcome.exit_code) + " before reporting";
  }
  return run;
}

}  // namespace cudoctor::runtime
