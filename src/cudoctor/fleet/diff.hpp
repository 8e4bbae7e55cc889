#pragma once
// Two reports compared over their stable facts (digest.hpp): the problems one side has and the
// other has not, and the facts that differ, those that explain a one-sided problem first.
#include <string>
#include <vector>

#include "cudoctor/fleet/digest.hpp"

namespace cudoctor::fleet {

// A fact that differs; a side's value is "" when that side lacks the key.
struct Change {
  std::string key;
  std::string a;
  std::string b;
  int layer = 0;
  std::vector<std::string> explains;  // ids of one-sided problems whose evidence names this value
  bool operator==(const Change&) const = default;
};

// A problem one side has and the other has not.
struct OneSided {
  char side = 'a';  // 'a' or 'b': the side that has it
  Problem problem;
  std::vector<std::string> because;  // keys of the changes that explain it, best first
};

struct Diff {
  std::vector<OneSided> problems;  // errors before warnings, then by layer, then by id
  std::vector<Change> changes;     // behind an error, a warning, in an error's layer, the rest; then by layer, key
  std::size_t same = 0;            // facts equal on both sides
};

// Compares two reports.
Diff diff(const Digest& a, const Digest& b);

// The changes between two fact lists (each sorted by key), unranked, in key order.
std::vector<Change> changes(const std::vector<Fact>& a, const std::vector<Fact>& b, std::size_t* same = nullptr);

// Whether a problem's text names this value: the whole value, a word of it (at least four
// characters), a path's file name, or, for a library fact, the library's name.
bool names_value(const Problem& p, const std::string& key, const std::string& value);

}  // namespace cudoctor::fleet
