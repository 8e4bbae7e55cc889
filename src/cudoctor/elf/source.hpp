#pragma once
// Where parse_elf reads a file's bytes from: memory (a mapping, a fixture's string), or reads
// at offsets (pread) through a small block cache, so that the loader's few headers of a
// large library cost a few reads, not a mapping's page faults and unmapping (an ldd over
// Debian's libtorch reads 325 libraries).
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/elf/bytes.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::elf {

// Reads up to n bytes at offset into buf: the count read (less only at the file's end), or
// an error.
using ReadAt = std::function<util::Result<std::size_t>(std::uint64_t offset, unsigned char* buf, std::size_t n)>;

class Source {
 public:
  virtual ~Source() = default;
  std::uint64_t size() const { return m_size; }
  bool big_endian() const { return m_be; }
  void set_big_endian(bool be) { m_be = be; }
  // [offset, offset + length) as bytes valid while the source lives; nullopt when it lies
  // outside the file or could not be read (error() then says why).
  virtual std::optional<Bytes> range(std::uint64_t offset, std::uint64_t length) = 0;
  // The NUL-terminated string at offset, which must end before end; nullopt otherwise.
  virtual std::optional<std::string_view> cstr(std::uint64_t offset, std::uint64_t end) = 0;
  // Why a read failed; "" when none did.
  const std::string& error() const { return m_error; }

  std::optional<std::uint16_t> u16(std::uint64_t off) { return at(off, 2, &Bytes::u16); }
  std::optional<std::uint32_t> u32(std::uint64_t off) { return at(off, 4, &Bytes::u32); }
  std::optional<std::uint64_t> u64(std::uint64_t off) { return at(off, 8, &Bytes::u64); }

 protected:
  explicit Source(std::uint64_t size) : m_size(size) {}
  std::uint64_t m_size;
  bool m_be = false;
  std::string m_error;

 private:
  template <typename T>
  std::optional<T> at(std::uint64_t off, std::uint64_t n, std::optional<T> (Bytes::*read)(std::uint64_t) const) {
    const auto b = range(off, n);
    return b ? ((*b).*read)(0) : std::nullopt;
  }
};

// Bytes already in memory: ranges are views of them.
class MemorySource final : public Source {
 public:
  MemorySource(const unsigned char* data, std::size_t size) : Source(size), m_data(data) {}
  std::optional<Bytes> range(std::uint64_t offset, std::uint64_t length) override;
  std::optional<std::string_view> cstr(std::uint64_t offset, std::uint64_t end) override;

 private:
  const unsigned char* m_data;
};

// Reads through ReadAt, a block at a time, each block once. A range that crosses blocks is
// read whole into its own buffer. At most k_budget bytes are read in all: a hostile file
// whose headers name its whole length gets an error, not an allocation of that size.
class ReadSource final : public Source {
 public:
  ReadSource(std::uint64_t size, ReadAt read, std::size_t block = k_block)
      : Source(size), m_read(std::move(read)), m_block(block < 1 ? 1 : block) {}
  std::uint64_t bytes_read() const { return m_spent; }
  std::optional<Bytes> range(std::uint64_t offset, std::uint64_t length) override;
  std::optional<std::string_view> cstr(std::uint64_t offset, std::uint64_t end) override;

  static constexpr std::size_t k_block = 4096;
  static constexpr std::uint64_t k_budget = 64ull << 20;

 private:
  const std::vector<unsigned char>* block(std::uint64_t index);
  const std::vector<unsigned char>* fill(std::vector<unsigned char>& buf, std::uint64_t offset, std::size_t n);

  ReadAt m_read;
  std::size_t m_block;
  std::map<std::uint64_t, std::vector<unsigned char>> m_blocks;
  std::deque<std::vector<unsigned char>> m_spans;  // stable: views into them are handed out
  std::uint64_t m_spent = 0;
};

}  // namespace cudoctor::elf
