#pragma once
// Small string helpers with no cudoctor knowledge.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudoctor::util {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
// Splits on runs of spaces and tabs; no empty fields.
std::vector<std::string_view> split_ws(std::string_view s);
std::vector<std::string_view> lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool contains_icase(std::string_view haystack, std::string_view needle);
std::string to_lower(std::string_view s);

// Parses an unsigned integer in base 10, or base 16 with a 0x prefix when base is 0.
// Whole string (after trimming) must be consumed.
std::optional<std::uint64_t> parse_uint(std::string_view s, int base = 10);
std::optional<std::int64_t> parse_int(std::string_view s);

// Makes a byte string safe to show in one line: control and non-UTF-8 bytes become \xNN.
std::string printable(std::string_view s, std::size_t max_len = 80);

}  // namespace cudoctor::util
