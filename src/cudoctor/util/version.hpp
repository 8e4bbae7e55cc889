#pragma once
// Dotted numeric versions as NVIDIA writes them: driver "535.104.05", CUDA "12.2".
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudoctor::util {

struct Version {
  std::vector<int> parts;  // "535.104.05" -> {535, 104, 5}
  std::string text;        // as written ("535.104.05"); empty when built from parts

  // Parses "N(.N)*"; nullopt for anything else (empty parts, letters, overflow).
  static std::optional<Version> parse(std::string_view s);
  int major() const { return parts.empty() ? 0 : parts[0]; }
  int minor() const { return parts.size() < 2 ? 0 : parts[1]; }

  // Missing trailing parts compare as zero: 12.2 == 12.2.0.
  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }
  std::string str() const;  // as written, else the parts joined with dots
};

// CUDA's integer version encoding (cuDriverGetVersion, NVML): 12020 -> "12.2".
std::string cuda_version_string(int encoded);

}  // namespace cudoctor::util
