#include "cudoctor/elf/source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace cudoctor::elf {

std::optional<Bytes> MemorySource::range(std::uint64_t offset, std::uint64_t length) {
  if (offset > m_size || length > m_size - offset) return std::nullopt;
  return Bytes(m_data + offset, static_cast<std::size_t>(length), m_be);
}

std::optional<std::string_view> MemorySource::cstr(std::uint64_t offset, std::uint64_t end) {
  if (end > m_size || offset >= end) return std::nullopt;
  const auto* start = m_data + offset;
  const auto* nul = static_cast<const unsigned char*>(std::memchr(start, 0, static_cast<std::size_t>(end - offset)));
  if (!nul) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(start), static_cast<std::size_t>(nul - start));
}

const std::vector<unsigned char>* ReadSource::fill(std::vector<unsigned char>& buf, std::uint64_t offset,
                                                   std::size_t n) {
  if (!m_error.empty()) return nullptr;
  if (m_spent + n > k_budget) {
    m_error = fmt::format("its headers ask for more than {} MiB of reads", k_budget >> 20);
    return nullptr;
  }
  m_spent += n;
  buf.resize(n);
  std::size_t got = 0;
  while (got < n) {
    const auto r = m_read(offset + got, buf.data() + got, n - got);
    if (!r) {
      m_error = r.error();
      return nullptr;
    }
    if (*r == 0) break;
    got += *r;
  }
  if (got < n) {
    m_error = "changed while it was read (the file shrank)";
    return nullptr;
  }
  return &buf;
}

const std::vector<unsigned char>* ReadSource::block(std::uint64_t index) {
  if (const auto it = m_blocks.find(index); it != m_blocks.end()) return &it->second;
  const auto offset = index * m_block;
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(m_block, m_size - offset));
  std::vector<unsigned char> buf;
  if (!fill(buf, offset, n)) return nullptr;
  return &m_blocks.emplace(index, std::move(buf)).first->second;
}

std::optional<Bytes> ReadSource::range(std::uint64_t offset, std::uint64_t length) {
  if (offset > m_size || length > m_size - offset) return std::nullopt;
  if (length == 0) return Bytes(nullptr, 0, m_be);
  const auto first = offset / m_block;
  if (first == (offset + length - 1) / m_block) {
    const auto* b = block(first);
    if (!b) return std::nullopt;
    return Bytes(b->data() + (offset - first * m_block), static_cast<std::size_t>(length), m_be);
  }
  if (length > k_budget) {
    m_error = fmt::format("its headers ask for more than {} MiB of reads", k_budget >> 20);
    return std::nullopt;
  }
  const auto* b = fill(m_spans.emplace_back(), offset, static_cast<std::size_t>(length));
  if (!b) return std::nullopt;
  return Bytes(b->data(), b->size(), m_be);
}

std::optional<std::string_view> ReadSource::cstr(std::uint64_t offset, std::uint64_t end) {
  if (end > m_size || offset >= end) return std::nullopt;
  // Within one block, a view of it; across blocks, the pieces joined into a span.
  std::vector<unsigned char> joined;
  for (auto at = offset; at < end;) {
    const auto index = at / m_block;
    const auto* b = block(index);
    if (!b) return std::nullopt;
    const auto from = static_cast<std::size_t>(at - index * m_block);
    const auto upto = static_cast<std::size_t>(std::min<std::uint64_t>(b->size(), end - index * m_block));
    const auto* start = b->data() + from;
    const auto* nul = static_cast<const unsigned char*>(std::memchr(start, 0, upto - from));
    if (nul && joined.empty())
      return std::string_view(reinterpret_cast<const char*>(start), static_cast<std::size_t>(nul - start));
    joined.insert(joined.end(), start, nul ? nul : b->data() + upto);
    if (nul) {
      const auto& kept = m_spans.emplace_back(std::move(joined));
      return std::string_view(reinterpret_cast<const char*>(kept.data()), kept.size());
    }
    at = index * m_block + upto;
  }
  return std::nullopt;
}

}  // namespace cudoctor::elf
