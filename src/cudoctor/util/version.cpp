#include "cudoctor/util/version.hpp"

#include <fmt/format.h>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::util {

std::optional<Version> Version::parse(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  Version v;
  v.text = std::string(s);
  for (const auto part : split(s, '.')) {
    const auto n = parse_uint(part);
    if (!n || *n > 1'000'000) return std::nullopt;
    v.parts.push_back(static_cast<int>(*n));
  }
  return v;
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  const auto n = std::max(parts.size(), other.parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int a = i < parts.size() ? parts[i] : 0;
    const int b = i < other.parts.size() ? other.parts[i] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

std::string cuda_version_string(int encoded) {
  // Encoding from cuda.h: 1000 * major + 10 * minor.
  return fmt::format("{}.{}", encoded / 1000, (encoded % 1000) / 10);
}

}  // namespace cudoctor::util

namespace cudoctor::util {
std::string Version::str() const {
  if (!text.empty()) return text;
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "." : "") + std::to_string(parts[i]);
  return s;
}
}  // namespace cudoctor::util
