#pragma once
// A bounds-checked view of bytes with an endianness: every read either returns a value or
// an error naming the offset; nothing reads past the end. Reads go through memcpy, so
// unaligned and hostile offsets are safe.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace cudoctor::elf {

class Bytes {
 public:
  Bytes() = default;
  Bytes(const unsigned char* data, std::size_t size, bool big_endian = false)
      : m_d(data), m_n(size), m_be(big_endian) {}

  std::size_t size() const { return m_n; }
  const unsigned char* data() const { return m_d; }
  bool big_endian() const { return m_be; }
  void set_big_endian(bool be) { m_be = be; }

  // [offset, offset + length) lies inside, with no overflow.
  bool contains(std::uint64_t offset, std::uint64_t length) const { return offset <= m_n && length <= m_n - offset; }
  std::optional<std::uint8_t> u8(std::uint64_t off) const { return read<std::uint8_t>(off); }
  std::optional<std::uint16_t> u16(std::uint64_t off) const { return read<std::uint16_t>(off); }
  std::optional<std::uint32_t> u32(std::uint64_t off) const { return read<std::uint32_t>(off); }
  std::optional<std::uint64_t> u64(std::uint64_t off) const { return read<std::uint64_t>(off); }
  // A NUL-terminated string starting at off, which must end inside the bytes.
  std::optional<std::string_view> cstr(std::uint64_t off) const {
    if (off >= m_n) return std::nullopt;
    const auto* start = m_d + off;
    const auto* end = static_cast<const unsigned char*>(std::memchr(start, 0, m_n - off));
    if (!end) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(start), static_cast<std::size_t>(end - start));
  }
  // A sub-range as its own Bytes (same endianness); nullopt when it does not fit.
  std::optional<Bytes> slice(std::uint64_t off, std::uint64_t len) const {
    if (!contains(off, len)) return std::nullopt;
    return Bytes(m_d + off, static_cast<std::size_t>(len), m_be);
  }

 private:
  template <typename T>
  std::optional<T> read(std::uint64_t off) const {
    if (!contains(off, sizeof(T))) return std::nullopt;
    T v;
    std::memcpy(&v, m_d + off, sizeof(T));
    if (m_be && sizeof(T) > 1) {
      T r = 0;
      for (std::size_t i = 0; i < sizeof(T); ++i) r = static_cast<T>((r << 8) | ((v >> (8 * i)) & 0xff));
      v = r;
    }
    return v;
  }

  const unsigned char* m_d = nullptr;
  std::size_t m_n = 0;
  bool m_be = false;
};

}  // namespace cudoctor::elf
