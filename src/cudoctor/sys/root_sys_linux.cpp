#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "cudoctor/sys/file_bytes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/sys/root_sys.hpp"

namespace cudoctor::sys {
namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

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

// An open() that failed keeps its errno, so stat() can tell "missing" from "unreadable".
struct Opened {
  Fd fd;
  int err = 0;
};

// Every path is resolved inside the root and only inside it. Where the kernel has openat2,
// RESOLVE_IN_ROOT does it (absolute links and ".." stop at the root, as in a chroot);
// elsewhere a component walk (canonical_with) resolves the path first, and the resolved
// path is opened with O_NOFOLLOW. A link that dangles or loops is an error, never a reason
// to open the host's file of the same name.
class RootSys final : public Sys {
 public:
  explicit RootSys(std::string root) : m_root(normalize(root)) {
    if (is_live()) return;
    m_root_fd = Fd(::open(m_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    char real[PATH_MAX];
    if (::realpath(m_root.c_str(), real)) m_root_real = real;
    if (m_root_fd.get() >= 0) {
      Opened probe = openat2_in_root(".", O_PATH);
      m_openat2 = probe.fd.get() >= 0 || (probe.err != ENOSYS && probe.err != EPERM);
    }
  }

  std::string host_path(std::string_view logical) const override {
    // On the live machine the kernel resolves "..": after symbolic links, which a lexical
    // normalisation would get wrong.
    if (m_root == "/" && !logical.empty() && logical.front() == '/') return std::string(logical);
    const auto n = normalize(logical);
    return m_root == "/" ? n : m_root + n;
  }

  bool is_live() const override { return m_root == "/"; }

  util::Result<std::string> canonical(std::string_view path) const override {
    const std::string key(path);
    {
      std::lock_guard lock(m_memo_mutex);
      if (const auto it = m_memo.find(key); it != m_memo.end()) return it->second;
    }
    auto result = canonical_uncached(key);
    std::lock_guard lock(m_memo_mutex);
    m_memo.emplace(key, result);
    return result;
  }

  FileStat stat(std::string_view path, bool follow) const override {
    FileStat out;
    struct stat st {};
    int rc = 0;
    if (is_live()) {
      const std::string p(path);
      rc = follow ? ::stat(p.c_str(), &st) : ::lstat(p.c_str(), &st);
      if (rc != 0) rc = errno;
    } else {
      Opened o = open_in_root(path, O_PATH, follow);
      if (o.fd.get() < 0)
        rc = o.err;
      else if (::fstat(o.fd.get(), &st) != 0)
        rc = errno;
    }
    if (rc != 0) {
      if (rc != ENOENT && rc != ENOTDIR) out.error = errno_text(rc);
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

  util::Result<std::string> read_file(std::string_view path, std::size_t max_bytes) const override {
    auto f = open_regular(path);
    if (!f) return util::error(f.error());
    return read_fd(f->fd.get(), path, max_bytes, f->size);
  }

  util::Result<std::shared_ptr<const Blob>> map_file(std::string_view path) const override {
    auto f = open_regular(path);
    if (!f) return util::error(f.error());
    return map_fd(f->fd.get(), f->size, path);
  }

  util::Result<std::unique_ptr<const Reader>> open_reader(std::string_view path) const override {
    auto f = open_regular(path);
    if (!f) return util::error(f.error());
    return fd_reader(std::move(f->fd), f->size, path, std::move(f->id));
  }

  util::Result<std::vector<std::string>> list_dir(std::string_view path) const override {
    Opened o = open_in_root(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK, true);
    if (o.fd.get() < 0) return util::error(std::string(path) + ": " + describe_error(path, o.err));
    DIR* d = ::fdopendir(o.fd.get());
    if (!d) return util::error(std::string(path) + ": " + errno_text(errno));
    o.fd.release();  // closedir closes it
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
    char buf[4096];
    ssize_t n = -1;
    if (is_live()) {
      n = ::readlink(std::string(path).c_str(), buf, sizeof buf);
    } else {
      Opened o = open_in_root(path, O_PATH | O_NOFOLLOW, false);
      if (o.fd.get() < 0) return util::error(std::string(path) + ": " + errno_text(o.err));
      n = ::readlinkat(o.fd.get(), "", buf, sizeof buf);
    }
    if (n < 0) return util::error(std::string(path) + ": " + errno_text(errno));
    return std::string(buf, static_cast<std::size_t>(n));
  }

  std::optional<std::string> env(std::string_view name) const override {
    const char* v = std::getenv(std::string(name).c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  }

  std::vector<std::string> env_names() const override {
    std::vector<std::string> names;
    for (char** e = environ; e && *e; ++e) {
      const std::string_view entry(*e);
      const auto eq = entry.find('=');
      if (eq != 0 && eq != std::string_view::npos) names.emplace_back(entry.substr(0, eq));
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
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

 private:
  Opened openat2_in_root(std::string_view rel, int flags) const {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    const std::string r(rel.empty() ? std::string_view(".") : rel);
    Opened o;
    // RESOLVE_IN_ROOT answers EAGAIN when a rename or mount raced a ".." in the lookup.
    for (int attempt = 0; attempt < 8; ++attempt) {
      const long fd = ::syscall(SYS_openat2, m_root_fd.get(), r.c_str(), &how, sizeof how);
      if (fd >= 0) {
        o.fd = Fd(static_cast<int>(fd));
        return o;
      }
      o.err = errno;
      if (o.err != EAGAIN) break;
    }
    return o;
  }

  // Opens a logical path; follow_last false opens a final symbolic link itself (O_PATH).
  Opened open_in_root(std::string_view logical, int flags, bool follow_last) const {
    if (!follow_last) flags |= O_NOFOLLOW;
    Opened o;
    if (is_live()) {
      const int fd = ::open(std::string(logical).c_str(), flags | O_CLOEXEC);
      if (fd < 0)
        o.err = errno;
      else
        o.fd = Fd(fd);
      return o;
    }
    if (m_root_fd.get() < 0) {
      o.err = ENOENT;
      return o;
    }
    if (m_openat2) {
      // The path as given: the kernel applies ".." after the links before it, as on the
      // live machine (a lexical normalisation would not).
      auto rel = logical;
      while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
      return openat2_in_root(rel, flags);
    }
    // No openat2: resolve inside the root first, then open what was resolved, refusing a
    // link that appeared in the meantime.
    auto resolved = canonical(follow_last ? logical : dirname(logical));
    if (resolved && !follow_last) resolved = join(*resolved, basename(logical));
    if (!resolved) {
      o.err = resolved.error().find("too many levels") != std::string::npos ? ELOOP : ENOENT;
      return o;
    }
    const int fd = ::open(host_path(*resolved).c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      o.err = errno;
    else
      o.fd = Fd(fd);
    return o;
  }

  // "No such file or directory", or "dangling symbolic link" when the path is a link whose
  // target is not there.
  std::string describe_error(std::string_view path, int err) const {
    if (err == ENOENT && stat(path, false).type == FileType::symlink) return "dangling symbolic link";
    return errno_text(err);
  }

  // A regular file opened for reading: its descriptor, size and "dev:ino" (Reader::identity).
  struct Regular {
    Fd fd;
    std::size_t size = 0;
    std::string id;
  };
  // Opens a regular file for reading. The type is checked on an O_PATH descriptor first, so a
  // device node, fifo or socket is never opened (opening some devices does something), then
  // the file is opened and checked to be the same one.
  util::Result<Regular> open_regular(std::string_view path) const {
    Opened probe = open_in_root(path, O_PATH, true);
    if (probe.fd.get() < 0) return util::error(std::string(path) + ": " + describe_error(path, probe.err));
    struct stat before {};
    if (::fstat(probe.fd.get(), &before) != 0) return util::error(std::string(path) + ": " + errno_text(errno));
    if (S_ISDIR(before.st_mode)) return util::error(std::string(path) + ": is a directory");
    if (!S_ISREG(before.st_mode)) return util::error(std::string(path) + ": not a regular file");
    // Reopened through the checked descriptor itself, so what is opened is what was checked;
    // without /proc, by its path again (and checked to be the same file below).
    Opened o;
    const auto self = "/proc/self/fd/" + std::to_string(probe.fd.get());
    if (const int fd = ::open(self.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC); fd >= 0)
      o.fd = Fd(fd);
    else
      o = open_in_root(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, true);
    if (o.fd.get() < 0) return util::error(std::string(path) + ": " + errno_text(o.err));
    struct stat st {};
    if (::fstat(o.fd.get(), &st) != 0) return util::error(std::string(path) + ": " + errno_text(errno));
    if (!S_ISREG(st.st_mode) || st.st_dev != before.st_dev || st.st_ino != before.st_ino)
      return util::error(std::string(path) + ": changed while it was opened");
    return Regular{std::move(o.fd), static_cast<std::size_t>(st.st_size),
                   std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)};
  }

  // The live answer from the directory's memoised one: an lstat of the last component (a
  // readlink if a link), not realpath's readlink of every component (1,900 for a toolkit's
  // libraries). nullopt leaves the path to realpath: "." or ".." in it or in a link (realpath
  // takes ".." after the links, as the kernel does), anything missing, a long chain of links.
  std::optional<std::string> live_canonical(const std::string& path, int depth) const {
    const auto plain = [](std::string_view p) {
      return !p.empty() && p.back() != '/' && p.find("//") == std::string_view::npos &&
             p.find("/.") == std::string_view::npos && !p.starts_with(".");
    };
    if (depth > 8 || path.size() < 2 || path.front() != '/' || !plain(path)) return std::nullopt;
    const auto slash = path.rfind('/');
    const auto real_dir = canonical(slash == 0 ? std::string("/") : path.substr(0, slash));
    if (!real_dir) return std::nullopt;
    const auto candidate = join(*real_dir, path.substr(slash + 1));
    struct stat st {};
    if (::lstat(candidate.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISLNK(st.st_mode)) return candidate;
    char buf[PATH_MAX];
    const auto n = ::readlink(candidate.c_str(), buf, sizeof buf);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) return std::nullopt;
    const std::string target(buf, static_cast<std::size_t>(n));
    if (!plain(target)) return std::nullopt;
    const auto next = target.front() == '/' ? target : join(*real_dir, target);
    if (std::lock_guard lock(m_memo_mutex); m_memo.count(next))
      return m_memo.at(next) ? std::optional<std::string>(*m_memo.at(next)) : std::nullopt;
    return live_canonical(next, depth + 1);
  }

  util::Result<std::string> canonical_uncached(const std::string& path) const {
    if (is_live()) {
      if (auto fast = live_canonical(path, 0)) return *fast;
      char buf[PATH_MAX];
      if (::realpath(path.c_str(), buf)) return std::string(buf);
      if (errno == ELOOP) return util::error(path + ": too many levels of symbolic links");
      return util::error(normalize(path) + ": no such file or directory");
    }
    if (m_openat2 && !m_root_real.empty()) {
      // The kernel resolved it inside the root; /proc names what it found.
      Opened o = open_in_root(path, O_PATH, true);
      if (o.fd.get() < 0) {
        if (o.err == ELOOP) return util::error(path + ": too many levels of symbolic links");
        return util::error(normalize(path) + ": " + describe_error(path, o.err));
      }
      char buf[PATH_MAX];
      const auto proc = "/proc/self/fd/" + std::to_string(o.fd.get());
      const auto n = ::readlink(proc.c_str(), buf, sizeof buf);
      if (n > 0) {
        const std::string host(buf, static_cast<std::size_t>(n));
        if (host == m_root_real) return std::string("/");
        if (host.starts_with(m_root_real + "/")) return host.substr(m_root_real.size());
      }
    }
    return canonical_with(
        path,
        [this](const std::string& p) {
          FileStat out;
          struct stat st {};
          if (::lstat(host_path(p).c_str(), &st) == 0) out.type = type_of(st.st_mode);
          return out;
        },
        [this](const std::string& p) -> util::Result<std::string> {
          char buf[4096];
          const auto n = ::readlink(host_path(p).c_str(), buf, sizeof buf);
          if (n < 0) return util::error(p + ": " + errno_text(errno));
          return std::string(buf, static_cast<std::size_t>(n));
        });
  }

  std::string m_root;
  std::string m_root_real;  // the root's own real path on this host
  Fd m_root_fd;
  bool m_openat2 = false;
  // One canonicalisation per path and run: environment discovery asks for the same
  // prefixes thousands of times.
  mutable std::mutex m_memo_mutex;
  mutable std::unordered_map<std::string, util::Result<std::string>> m_memo;
};

}  // namespace

std::unique_ptr<Sys> make_root_sys(std::string root) {
  // A relative root is taken from the working directory, as every other path on the line.
  if (!root.empty() && root.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd)) root = std::string(cwd) + "/" + root;
  }
  return std::make_unique<RootSys>(std::move(root));
}

}  // namespace cudoctor::sys
