#include "cudoctor/fleet/diff.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::fleet {

namespace {

int severity_rank(const std::string& s) {
  return s == "error" ? 0 : 1;
}

// Whether needle occurs in text as a word: not inside a longer version or name
// ("13.0" is not in "113.05", "libcuda.so.1" is not in "libcuda.so.12").
bool has_word(std::string_view text, std::string_view needle) {
  if (needle.empty()) return false;
  const auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+';
  };
  for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
    const bool left = at == 0 || !word_char(text[at - 1]);
    const auto end = at + needle.size();
    // A sentence's full stop after a word still ends it.
    const bool right = end >= text.size() || !word_char(text[end]) ||
                       (text[end] == '.' && (end + 1 >= text.size() || !word_char(text[end + 1])));
    if (left && right) return true;
  }
  return false;
}

}  // namespace

bool names_value(const Problem& p, const std::string& key, const std::string& value) {
  // The digest's words for nothing ("not found", "(none)") name no fact of their own.
  const bool placeholder = value == "not found" || value.starts_with('(');
  if (!placeholder && value.size() >= 4 && has_word(p.text, value)) return true;
  for (const auto w : placeholder ? std::vector<std::string_view>{} : util::split_ws(value)) {
    if (w.size() >= 4 && has_word(p.text, w)) return true;
    const auto slash = w.rfind('/');
    if (slash != std::string_view::npos && w.size() - slash > 4 && has_word(p.text, w.substr(slash + 1))) return true;
  }
  const auto lib = key.find(".library.");
  return lib != std::string::npos && has_word(p.text, std::string_view(key).substr(lib + 9));
}

std::vector<Change> changes(const std::vector<Fact>& a, const std::vector<Fact>& b, std::size_t* same) {
  std::vector<Change> out;
  std::size_t equal = 0;
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() || j != b.end()) {
    if (j == b.end() || (i != a.end() && i->key < j->key)) {
      out.push_back({i->key, i->value, "", i->layer, {}});
      ++i;
    } else if (i == a.end() || j->key < i->key) {
      out.push_back({j->key, "", j->value, j->layer, {}});
      ++j;
    } else {
      if (i->value != j->value)
        out.push_back({i->key, i->value, j->value, i->layer, {}});
      else
        ++equal;
      ++i;
      ++j;
    }
  }
  if (same) *same = equal;
  return out;
}

Diff diff(const Digest& a, const Digest& b) {
  Diff d;
  d.changes = changes(a.facts, b.facts, &d.same);
  for (const auto* side : {&a, &b}) {
    const auto* other = side == &a ? &b : &a;
    for (const auto& p : side->problems)
      if (!other->problem(p.id)) d.problems.push_back({side == &a ? 'a' : 'b', p, {}});
  }
  std::stable_sort(d.problems.begin(), d.problems.end(), [](const OneSided& x, const OneSided& y) {
    const auto kx = std::tuple(severity_rank(x.problem.severity), x.problem.layer, x.problem.id);
    const auto ky = std::tuple(severity_rank(y.problem.severity), y.problem.layer, y.problem.id);
    return kx < ky;
  });
  // Each change is matched against the problems of the side whose value it is.
  for (auto& c : d.changes)
    for (const auto& o : d.problems) {
      const auto& value = o.side == 'a' ? c.a : c.b;
      if (!value.empty() && names_value(o.problem, c.key, value)) c.explains.push_back(o.problem.id);
    }
  // 0 behind an error, 1 behind a warning, 2 in the layer of an error on one side only, 3 the rest.
  std::vector<std::string> error_layers;
  for (const auto& o : d.problems)
    if (o.problem.severity == "error") error_layers.push_back(o.problem.layer);
  const auto rank = [&](const Change& c) {
    int best = 3;
    for (const auto& id : c.explains)
      for (const auto& o : d.problems)
        if (o.problem.id == id) best = std::min(best, severity_rank(o.problem.severity));
    const auto layer = "L" + std::to_string(c.layer);
    if (best == 3 && std::find(error_layers.begin(), error_layers.end(), layer) != error_layers.end()) best = 2;
    return best;
  };
  std::stable_sort(d.changes.begin(), d.changes.end(), [&](const Change& x, const Change& y) {
    return std::tuple(rank(x), x.layer, x.key) < std::tuple(rank(y), y.layer, y.key);
  });
  for (auto& o : d.problems)
    for (const auto& c : d.changes)
      if (std::find(c.explains.begin(), c.explains.end(), o.problem.id) != c.explains.end()) o.because.push_back(c.key);
  return d;
}

}  // namespace cudoctor::fleet
