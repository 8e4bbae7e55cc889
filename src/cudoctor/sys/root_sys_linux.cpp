#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cudoctor/sys/paths.hpp"
#include "cudoctor/sys/root_sys.hpp"

extern char** environ;

namespace cudoctor::sys {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

FileType type_of(mode_t m) {
  if (S_ISREG(m)) return FileType::regular;
  if (S_ISDIR(m)) return FileType::directory;
  if (S_ISLNK(m)) return FileType::symlink;
  if (S_ISCHR(m)) return FileType::char_device;
  if (S_ISBLK(m)) return FileType::block_device;
  if (S_ISFIFO(m)) return FileType::fifo;
  if (S_ISSOCK(m)) return FileType::socket;
  return FileType::other;
}

class Fd {
public:
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }

private:
  int m_fd;
};

class MappedBlob final : public Blob {
public:
  MappedBlob(void* p, std::size_t n) : m_p(p), m_n(n) {}
  ~MappedBlob() override {
    if (m_p) ::munmap(m_p, m_n);
  }
  MappedBlob(const MappedBlob&) = delete;
  MappedBlob& operator=(const MappedBlob&) = delete;
  const unsigned char* data() const override { return static_cast<const unsigned char*>(m_p); }
  std::size_t size() const override { return m_n; }

private:
  void* m_p;
  std::size_t m_n;
};

class RootSys final : public Sys {
public:
  explicit RootSys(std::string root) : m_root(normalize(root)) {}

  std::string host_path(std::string_view logical) const override {
    // On the live machine the kernel resolves "..": after symbolic links, which a lexical
    // normalisation would get wrong.
    if (m_root == "/" && !logical.empty() && logical.front() == '/') return std::string(logical);
    const auto n = normalize(logical);
    return m_root == "/" ? n : m_root + n;
  }

  bool is_live() const override { return m_root == "/"; }

  util::Result<std::string> canonical(std::string_view path) const override {
    return canonical_with(
        path, [this](const std::string& p) { return raw_lstat(p); },
        [this](const std::string& p) -> util::Result<std::string> {
          char buf[4096];
          const auto n = ::readlink(host_path(p).c_str(), buf, sizeof buf);
          if (n < 0) return util::error(p + ": " + errno_text(errno));
          return std::string(buf, static_cast<std::size_t>(n));
        });
  }

  // lstat of the host path itself; used on paths whose directories are already resolved.
  FileStat raw_lstat(const std::string& logical) const {
    FileStat out;
    struct stat st {};
    if (::lstat(host_path(logical).c_str(), &st) != 0) return out;
    out.type = type_of(st.st_mode);
    return out;
  }

  // The host path of a logical path with every link on the way resolved inside the root.
  // On the live machine the kernel does this itself.
  std::string resolved(std::string_view logical, bool follow_last = true) const {
    if (is_live()) return host_path(logical);
    if (!follow_last) {
      auto dir = canonical(dirname(logical));
      return dir ? host_path(join(*dir, basename(logical))) : host_path(logical);
    }
    auto c = canonical(logical);
    return c ? host_path(*c) : host_path(logical);
  }

  // Opens a regular file for reading; fifos, devices and directories are refused (O_NONBLOCK:
  // opening a fifo must not wait for a writer).
  util::Result<std::shared_ptr<Fd>> open_regular(std::string_view path, std::size_t& size) const {
    const auto host = resolved(path);
    auto fd = std::make_shared<Fd>(::open(host.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd->get() < 0) return util::error(std::string(path) + ": " + errno_text(errno));
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return util::error(std::string(path) + ": " + errno_text(errno));
    if (S_ISDIR(st.st_mode)) return util::error(std::string(path) + ": is a directory");
    if (!S_ISREG(st.st_mode)) return util::error(std::string(path) + ": not a regular file");
    size = static_cast<std::size_t>(st.st_size);
    return fd;
  }

  util::Result<std::string> read_file(std::string_view path, std::size_t max_bytes) const override {
    std::size_t size = 0;
    auto opened = open_regular(path, size);
    if (!opened) return util::error(opened.error());
    const Fd& fd = **opened;
    std::string out;
    char buf[65536];
    for (;;) {
      const auto n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        return util::error(std::string(path) + ": " + errno_text(errno));
      }
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
      if (out.size() > max_bytes)
        return util::error(std::string(path) + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
    return out;
  }

  util::Result<std::shared_ptr<const Blob>> map_file(std::string_view path) const override {
    std::size_t n = 0;
    auto opened = open_regular(path, n);
    if (!opened) return util::error(opened.error());
    const Fd& fd = **opened;
    if (n == 0) return std::shared_ptr<const Blob>(std::make_shared<MappedBlob>(nullptr, 0));
    void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) return util::error(std::string(path) + ": " + errno_text(errno));
    return std::shared_ptr<const Blob>(std::make_shared<MappedBlob>(p, n));
  }

  util::Result<std::vector<std::string>> list_dir(std::string_view path) const override {
    const auto host = resolved(path);
    DIR* d = ::opendir(host.c_str());
    if (!d) return util::error(std::string(path) + ": " + errno_text(errno));
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string_view n = e->d_name;
      if (n != "." && n != "..") names.emplace_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  util::Result<std::string> read_link(std::string_view path) const override {
    const auto host = resolved(path, false);
    char buf[4096];
    const auto n = ::readlink(host.c_str(), buf, sizeof buf);
    if (n < 0) return util::error(std::string(path) + ": " + errno_text(errno));
    return std::string(buf, static_cast<std::size_t>(n));
  }

  FileStat stat(std::string_view path, bool follow) const override {
    FileStat out;
    std::string host;
    if (follow && !is_live()) {
      // Links with absolute targets must resolve inside the root, not on this host.
      auto c = canonical(path);
      if (!c) return out;  // dangling: missing, as stat() says
      host = host_path(*c);
    } else {
      host = resolved(path, false);
    }
    struct stat st {};
    const int rc = follow ? ::stat(host.c_str(), &st) : ::lstat(host.c_str(), &st);
    if (rc != 0) {
      if (errno != ENOENT) out.error = errno_text(errno);
      return out;
    }
    out.type = type_of(st.st_mode);
    out.mode = st.st_mode & 07777;
    out.uid = st.st_uid;
    out.gid = st.st_gid;
    out.size = static_cast<std::uint64_t>(st.st_size);
    if (out.type == FileType::char_device || out.type == FileType::block_device) {
      out.rdev_major = major(st.st_rdev);
      out.rdev_minor = minor(st.st_rdev);
    }
    return out;
  }

  std::optional<std::string> env(std::string_view name) const override {
    const char* v = std::getenv(std::string(name).c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  }

  Identity identity() const override {
    Identity id;
    id.uid = ::geteuid();
    id.gid = ::getegid();
    const int n = ::getgroups(0, nullptr);
    if (n > 0) {
      std::vector<gid_t> groups(static_cast<std::size_t>(n));
      const int got = ::getgroups(n, groups.data());
      for (int i = 0; i < got; ++i) id.groups.push_back(groups[static_cast<std::size_t>(i)]);
    }
    if (const passwd* pw = ::getpwuid(id.uid)) id.user_name = pw->pw_name;
    return id;
  }

  ProcessResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) const override;

private:
  std::string m_root;
};

void drain(int fd, std::string& into) {
  char buf[8192];
  for (;;) {
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return;
    into.append(buf, static_cast<std::size_t>(n));
  }
}

ProcessResult RootSys::run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) const {
  ProcessResult r;
  if (argv.empty()) {
    r.error = "no program given";
    return r;
  }
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = errno_text(errno);
    return r;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = errno_text(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group, so a timeout kills the program's children too.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  const auto program = host_path(argv[0]);
  std::vector<char*> args;
  args.push_back(const_cast<char*>(program.c_str()));
  for (std::size_t i = 1; i < argv.size(); ++i) args.push_back(const_cast<char*>(argv[i].c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    r.error = argv[0] + ": " + errno_text(rc);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return r;
  }
  r.started = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[8192];
      const auto got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
        if (r.out.size() + r.err.size() > (16u << 20)) r.timed_out = true;  // runaway output
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (r.timed_out) break;
  }
  if (r.timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (auto& f : fds)
    if (f.fd >= 0) {
      if (!r.timed_out) drain(f.fd, &f == &fds[0] ? r.out : r.err);
      ::close(f.fd);
    }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace

std::unique_ptr<Sys> make_root_sys(std::string root) { return std::make_unique<RootSys>(std::move(root)); }

}  // namespace cudoctor::sys
