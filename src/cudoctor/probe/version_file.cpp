#include "cudoctor/probe/version_file.hpp"

#include <optional>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

// A hand-written scanner, not std::regex: compiling the two patterns cost a millisecond and a
// half of every check (libstdc++'s regex compiler), more than reading every file it is used on.
bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && space(s[i])) ++i;
  return i;
}

// A name at i; its end, or npos when none starts there.
std::size_t name_end(std::string_view s, std::size_t i) {
  if (i >= s.size() || !name_start(s[i])) return std::string_view::npos;
  while (i < s.size() && name_char(s[i])) ++i;
  return i;
}

// A value at i, after any spaces: 'text', "text", None, True, False, or [0-9.]+.
std::optional<std::string> value_at(std::string_view s, std::size_t i) {
  i = skip_space(s, i);
  if (i >= s.size()) return std::nullopt;
  if (s[i] == '\'' || s[i] == '"') {
    const auto close = s.find(s[i], i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    return std::string(s.substr(i + 1, close - i - 1));
  }
  for (const std::string_view word : {"None", "True", "False"})
    if (s.substr(i).starts_with(word)) return std::string(word);
  auto end = i;
  while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.')) ++end;
  if (end == i) return std::nullopt;
  return std::string(s.substr(i, end - i));
}

// `['name'] = value` starting at the '[' at i.
std::optional<std::pair<std::string, std::string>> item_at(std::string_view s, std::size_t i) {
  i = skip_space(s, i + 1);
  if (i >= s.size() || s[i] != '\'') return std::nullopt;
  const auto end = name_end(s, i + 1);
  if (end == std::string_view::npos || end >= s.size() || s[end] != '\'') return std::nullopt;
  auto j = skip_space(s, end + 1);
  if (j >= s.size() || s[j] != ']') return std::nullopt;
  j = skip_space(s, j + 1);
  if (j >= s.size() || s[j] != '=') return std::nullopt;
  auto v = value_at(s, j + 1);
  if (!v) return std::nullopt;
  return std::pair{std::string(s.substr(i + 1, end - i - 1)), std::move(*v)};
}

// `name = value`, `name: annotation = value`, `'name': value` at the line's start. After the
// name, a ':' may open an annotation running to the first '=' (the value follows the '=', or,
// failing that, a later ':' inside the annotation, the nearest to the '=' first), or itself be
// the separator.
std::optional<std::pair<std::string, std::string>> plain_at(std::string_view s) {
  auto i = skip_space(s, 0);
  if (i < s.size() && s[i] == '\'') ++i;
  const auto end = name_end(s, i);
  if (end == std::string_view::npos) return std::nullopt;
  std::string name(s.substr(i, end - i));
  auto p = end;
  if (p < s.size() && s[p] == '\'') ++p;
  p = skip_space(s, p);
  if (p >= s.size()) return std::nullopt;
  if (s[p] == ':') {
    const auto eq = std::min(s.find('=', p + 1), s.size());
    for (auto j = eq; j > p; --j)
      if (j < s.size() && (s[j] == '=' || s[j] == ':'))
        if (auto v = value_at(s, j + 1)) return std::pair{std::move(name), std::move(*v)};
  }
  if (s[p] == '=' || s[p] == ':')
    if (auto v = value_at(s, p + 1)) return std::pair{std::move(name), std::move(*v)};
  return std::nullopt;
}

}  // namespace

std::map<std::string, std::string> version_file_assignments(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto line : util::lines(text)) {
    std::optional<std::pair<std::string, std::string>> a;
    for (auto b = line.find('['); !a && b != std::string_view::npos; b = line.find('[', b + 1)) a = item_at(line, b);
    if (!a) a = plain_at(line);
    if (a) out[a->first] = std::move(a->second);
  }
  return out;
}

}  // namespace cudoctor::probe
