#pragma once
// The bytes of an open regular file, for RootSys: read whole, read at offsets, or mapped (guarded against the
// file shrinking, see mapped_file_guard.hpp).
#include <unistd.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "cudoctor/sys/sys.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::sys {

// An owned file descriptor, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  Fd(Fd&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(m_fd, o.m_fd);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }
  int release() { return std::exchange(m_fd, -1); }

 private:
  int m_fd;
};

// A Reader of fd (owned), n bytes long: pread at offsets. Errors name path; identity is the
// file's "dev:ino" (Reader::identity).
std::unique_ptr<const Reader> fd_reader(Fd fd, std::size_t n, std::string_view path, std::string identity);

// Reads fd to its end, at most max_bytes; errors name path. size_hint is the size fstat gave
// (0 for most /proc and /sys files): the bytes are read straight into a string that large.
util::Result<std::string> read_fd(int fd, std::string_view path, std::size_t max_bytes, std::size_t size_hint = 0);

// The n bytes of fd mapped read-only; read into memory instead when no guard slot is free
// (a shrinking file would raise SIGBUS). An empty file is an empty blob. Errors name path.
util::Result<std::shared_ptr<const Blob>> map_fd(int fd, std::size_t n, std::string_view path);

}  // namespace cudoctor::sys
