#include "cudoctor/rules/tune_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::tune {
namespace {

bool power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

std::optional<std::uint64_t> whole_uint(std::string_view s) {
  const auto r = read_int(s);
  if (!r.whole || r.value < 0) return std::nullopt;
  return static_cast<std::uint64_t>(r.value);
}

// roundup_power2_divisions: N (a power of 2, or 0), or [SIZE:N,…,>:N] with SIZE a power of 2 (MB).
std::string roundup_problem(std::string_view v) {
  if (v.empty()) return "needs a value";
  if (v.front() != '[') {
    const auto n = whole_uint(v);
    if (!n || (*n != 0 && !power_of_two(*n))) return "must be a power of 2 (or 0)";
    return "";
  }
  if (v.back() != ']') return "a list must end with ]";
  for (const auto item : util::split(v.substr(1, v.size() - 2), ',')) {
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) return "each list entry is SIZE:DIVISIONS";
    const auto size = util::trim(item.substr(0, colon));
    const auto div = whole_uint(util::trim(item.substr(colon + 1)));
    if (!div || (*div != 0 && !power_of_two(*div))) return "divisions must be powers of 2";
    if (size != ">") {
      const auto s = whole_uint(size);
      if (!s || !power_of_two(*s)) return "list sizes must be powers of 2 (or >)";
    }
  }
  return "";
}

std::string value_problem(const kb::AllocatorKey& k, std::string_view v) {
  if (k.grammar == "mb") {
    const auto n = whole_uint(v);
    if (!n) return fmt::format("{} needs a whole number of MB", k.key);
    if (*n < static_cast<std::uint64_t>(k.min))
      return fmt::format("{} is too small: it must be at least {}", k.key, k.min);
  } else if (k.grammar == "fraction") {
    double d = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || !(d > 0.0 && d < 1.0))
      return fmt::format("{} must be a number strictly between 0 and 1", k.key);
  } else if (k.grammar == "py_bool") {
    if (v != "True" && v != "False") return fmt::format("{} takes exactly True or False (capitalised)", k.key);
  } else if (k.grammar == "power2") {
    const auto n = whole_uint(v);
    if (!n || !power_of_two(*n)) return fmt::format("{} must be a power of 2", k.key);
  } else if (k.grammar == "backend") {
    if (v != "native" && v != "cudaMallocAsync") return "backend is native or cudaMallocAsync";
  } else if (k.grammar == "roundup") {
    if (const auto p = roundup_problem(v); !p.empty()) return "roundup_power2_divisions " + p;
  }
  return "";
}

}  // namespace

IntReading read_int(std::string_view value) {
  IntReading r;
  auto s = value;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  int base = 10;
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) return r;  // one sign at most
  // strtol with base 0, as NCCL reads its parameters: 0x… hexadecimal, 0… octal.
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  long long v = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (res.ec != std::errc()) return r;
  r.value = negative ? -v : v;
  r.whole = res.ptr == s.data() + s.size();
  return r;
}

Workspace read_workspace(std::string_view value) {
  // Every match of ":([0-9]+):([0-9]+)", left to right, as PyTorch's std::regex search finds them
  // (scanned by hand: libstdc++'s regex recurses, and a value can be a megabyte long).
  Workspace w;
  const auto digits = [&](std::size_t at) {
    std::size_t end = at;
    while (end < value.size() && value[end] >= '0' && value[end] <= '9') ++end;
    return end;
  };
  for (std::size_t i = 0; i < value.size();) {
    const auto a_end = value[i] == ':' ? digits(i + 1) : i;
    const auto b_end = a_end > i + 1 && a_end < value.size() && value[a_end] == ':' ? digits(a_end + 1) : a_end;
    if (b_end <= a_end + 1) {
      ++i;
      continue;
    }
    const auto size = whole_uint(value.substr(i + 1, a_end - i - 1));
    const auto count = whole_uint(value.substr(a_end + 1, b_end - a_end - 1));
    if (!size || !count || *size > (1ull << 30) || *count > (1ull << 20)) return {};
    w.pairs.emplace_back(*size, *count);
    w.bytes += *size * 1024 * *count;
    i = b_end;
  }
  w.deterministic_ok = value == ":4096:8" || value == ":16:8";
  return w;
}

std::vector<AllocItem> read_alloc_conf(std::string_view value, const kb::Settings& settings,
                                       const snapshot::LibraryWords* torch) {
  std::vector<AllocItem> items;
  // PyTorch's lexer drops spaces; a list in [...] holds commas of its own.
  std::string compact;
  for (const char c : value)
    if (c != ' ') compact.push_back(c);
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (const char c : compact) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ',' && depth == 0) {
      parts.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(std::move(cur));
  bool async = false;
  for (const auto& p : parts) async = async || p == "backend:cudaMallocAsync";
  for (const auto& p : parts) {
    if (p.empty()) continue;
    AllocItem item;
    const auto colon = p.find(':');
    item.key = p.substr(0, colon);
    item.value = colon == std::string::npos ? "" : p.substr(colon + 1);
    item.known = settings.allocator_key(item.key);
    const bool in_torch =
        torch && std::find(torch->present.begin(), torch->present.end(), item.key) != torch->present.end();
    const bool not_in_torch =
        torch && std::find(torch->absent.begin(), torch->absent.end(), item.key) != torch->absent.end();
    if (colon == std::string::npos) {
      item.problem = fmt::format("'{}' has no :value", item.key);
    } else if (not_in_torch || (!torch && !item.known)) {
      const auto near = nearest_key(item.key, settings);
      item.problem = fmt::format("{} is not an option {}{}", item.key,
                                 torch ? "this torch knows (its libraries hold no such key)"
                                       : "the knowledge base lists (this torch's libraries could not be searched)",
                                 near.empty() ? "" : fmt::format("; did you mean {}?", near));
    } else if (item.known) {
      item.problem = value_problem(*item.known, item.value);
      if (item.problem.empty() && async && item.known->native_only)
        item.note = fmt::format("{} is ignored with backend:cudaMallocAsync", item.key);
    } else if (in_torch) {
      item.note = fmt::format("{} is an option of this torch that the knowledge base does not describe", item.key);
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::string nearest_key(const std::string& key, const kb::Settings& settings) {
  if (key.size() > 64) return "";  // no misspelling of a key is that long
  std::string best;
  std::size_t best_d = 4;
  for (const auto& k : settings.allocator_keys) {
    if (k.key == key) continue;
    const auto d = util::edit_distance(key, k.key);
    if (d < best_d || (key.size() >= 6 && k.key.starts_with(key) && best.empty())) {
      best_d = std::min(d, best_d);
      best = k.key;
    }
  }
  return best;
}

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 20))
    return bytes % (1ull << 20) == 0 ? fmt::format("{} MiB", bytes >> 20)
                                     : fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{} KiB", bytes >> 10);
}

}  // namespace cudoctor::rules::tune
