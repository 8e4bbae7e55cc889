#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "cudoctor/sys/file_bytes.hpp"
#include "cudoctor/sys/mapped_file_guard.hpp"

namespace cudoctor::sys {
namespace {

class MappedBlob final : public Blob {
 public:
  MappedBlob(void* p, std::size_t n) : m_p(p), m_n(n), m_slot(guard_mapping(p, n)) {}
  ~MappedBlob() override {
    unguard_mapping(m_slot);
    if (m_p) ::munmap(m_p, m_n);
  }
  MappedBlob(const MappedBlob&) = delete;
  MappedBlob& operator=(const MappedBlob&) = delete;
  const unsigned char* data() const override { return static_cast<const unsigned char*>(m_p); }
  std::size_t size() const override { return m_n; }
  bool shrank() const override { return mapping_shrank(m_slot); }
  bool guarded() const { return m_slot >= 0; }
  void release(std::size_t offset, std::size_t n) const override {
    // Whole pages inside the range only: a page shared with bytes still in use stays.
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (offset + page - 1) / page * page;
    const auto end = std::min(offset + n, m_n) / page * page;
    if (end > begin) ::madvise(static_cast<char*>(m_p) + begin, end - begin, MADV_DONTNEED);
  }

 private:
  void* m_p;
  std::size_t m_n;
  int m_slot;
};

class HeapBlob final : public Blob {
 public:
  explicit HeapBlob(std::string bytes) : m_bytes(std::move(bytes)) {}
  const unsigned char* data() const override { return reinterpret_cast<const unsigned char*>(m_bytes.data()); }
  std::size_t size() const override { return m_bytes.size(); }

 private:
  std::string m_bytes;
};

class FdReader final : public Reader {
 public:
  FdReader(Fd fd, std::size_t n, std::string_view path, std::string identity)
      : m_fd(std::move(fd)), m_n(n), m_path(path), m_identity(std::move(identity)) {}
  std::uint64_t size() const override { return m_n; }
  util::Result<std::size_t> read_at(std::uint64_t offset, unsigned char* buf, std::size_t n) const override {
    for (;;) {
      const auto got = ::pread(m_fd.get(), buf, n, static_cast<off_t>(offset));
      if (got >= 0) {
        // Short of the size fstat gave: the file shrank while it was read.
        if (static_cast<std::size_t>(got) < n && offset + static_cast<std::uint64_t>(got) < m_n) m_shrank = true;
        return static_cast<std::size_t>(got);
      }
      if (errno != EINTR) return util::error(m_path + ": " + std::strerror(errno));
    }
  }
  bool shrank() const override { return m_shrank; }
  const std::string& identity() const override { return m_identity; }

 private:
  Fd m_fd;
  std::uint64_t m_n;
  std::string m_path;
  std::string m_identity;
  mutable bool m_shrank = false;
};

}  // namespace

std::unique_ptr<const Reader> fd_reader(Fd fd, std::size_t n, std::string_view path, std::string identity) {
  return std::make_unique<FdReader>(std::move(fd), n, path, std::move(identity));
}

util::Result<std::string> read_fd(int fd, std::string_view path, std::size_t max_bytes, std::size_t size_hint) {
  // Read in place into one string: sized from fstat's size when there is one (the byte past
  // it asked for too, so a file that grew since is not cut short), else grown 64 KiB at a
  // time; never more than one byte past max_bytes, which is how a larger file is told.
  const std::size_t limit = max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1;
  std::string out;
  out.resize(std::min(limit, size_hint > 0 ? size_hint + 1 : std::size_t{65536}));
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      if (have >= limit)
        return util::error(std::string(path) + ": larger than " + std::to_string(max_bytes) + " bytes");
      out.resize(std::min(limit, have + std::max(have, std::size_t{65536})));
    }
    const auto n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return util::error(std::string(path) + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return out;
}

util::Result<std::shared_ptr<const Blob>> map_fd(int fd, std::size_t n, std::string_view path) {
  if (n == 0) return std::shared_ptr<const Blob>(std::make_shared<HeapBlob>(""));
  void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return util::error(std::string(path) + ": " + std::strerror(errno));
  auto mapped = std::make_shared<MappedBlob>(p, n);
  if (mapped->guarded()) return std::shared_ptr<const Blob>(std::move(mapped));
  // No guard slot free: a shrinking file would raise SIGBUS, so read it instead.
  mapped.reset();
  auto bytes = read_fd(fd, path, SIZE_MAX, n);
  if (!bytes) return util::error(bytes.error());
  return std::shared_ptr<const Blob>(std::make_shared<HeapBlob>(std::move(bytes).value()));
}

}  // namespace cudoctor::sys
