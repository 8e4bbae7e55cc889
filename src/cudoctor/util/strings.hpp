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
// Levenshtein distance: the fewest insertions, deletions and substitutions from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b);
std::vector<std::string_view> lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool contains_icase(std::string_view haystack, std::string_view needle);
std::string to_lower(std::string_view s);

// Parses an unsigned integer in base 10, or base 16 with a 0x prefix when base is 0.
// Whole string (after trimming) must be consumed.
std::optional<std::uint64_t> parse_uint(std::string_view s, int base = 10);
std::optional<std::int64_t> parse_int(std::string_view s);

// Makes a byte string safe to show on a terminal, in one line: valid UTF-8 is kept; C0
// controls (\n, \t, \r by name, the others as \xNN, ESC as \x1b), DEL, C1 controls
// (U+0080..U+009F as \u0085), the line and paragraph separators, the bidirectional
// overrides and isolates (U+202A..U+202E, U+2066..U+2069) and every byte that is not part
// of well-formed UTF-8 (\xff) are shown escaped. Past max_chars code points the rest is
// cut and "…" appended.
std::string visible(std::string_view s, std::size_t max_chars = std::string_view::npos);
// visible() cut at max_len code points, for values quoted inside a longer message.
std::string printable(std::string_view s, std::size_t max_len = 80);
// Whether s holds a byte that visible() would escape.
bool has_control(std::string_view s);

}  // namespace cudoctor::util
