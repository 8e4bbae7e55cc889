// The matcher. RE2's FilteredRE2 takes from each pattern the literal strings a match must
// contain ("atoms"). One expression of the atoms that every match needs gates each line
// (most lines of a log hold none and cost one search); a line that passes has all its atoms
// found by one RE2::Set of literals, and only the patterns whose atoms are there are run.
// RE2 runs in time linear in the line: no pattern can make a hostile log hang it.
#include <fmt/format.h>
#include <re2/filtered_re2.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include "cudoctor/explain/explain.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::explain {

namespace {

// One pattern with its own prefilter: which of its atoms a line must hold for it to be run.
struct Pattern {
  std::unique_ptr<re2::FilteredRE2> filter;
  std::vector<int> atoms;  // the global id of each of its atoms, by its local index
};

}  // namespace

struct Matcher::Impl {
  const Library* lib = nullptr;
  std::vector<Pattern> patterns;                       // signatures, then facts
  std::vector<std::vector<std::pair<int, int>>> uses;  // global atom -> (pattern, local atom)
  std::unique_ptr<RE2::Set> atoms;                     // every atom, lower case
  std::unique_ptr<RE2> gate;                           // any of the atoms some match needs
};

Matcher::Matcher(std::unique_ptr<Impl> impl) : m(std::move(impl)) {}
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;
Matcher::~Matcher() = default;

namespace {

// How rarely an atom appears in ordinary log text: its length, and more when it holds a sign
// that words and paths lack ("+cpu" is rarer than "torch", which every traceback path holds).
std::size_t rarity(const std::string& atom) {
  std::size_t r = atom.size();
  for (const char c : atom)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' || c == '.' || c == '/' || c == '_' || c == '-'))
      return r + 4;
  return r;
}

// The pattern's atoms for the gate: its rarest atom that every match contains (the pattern
// cannot match without it), or, where none is needed alone (an alternation), all of them.
// Atoms that come with a rarer one ("lib" beside "not found in the system path") stay out, so
// that a traceback's site-packages paths pass no literal.
std::vector<std::string> gate_atoms(const re2::FilteredRE2& f, const std::vector<std::string>& atoms) {
  std::string best;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    std::vector<int> without, ids;
    for (std::size_t j = 0; j < atoms.size(); ++j)
      if (j != i) without.push_back(static_cast<int>(j));
    f.AllPotentials(without, &ids);
    if (ids.empty() && (best.empty() || rarity(atoms[i]) > rarity(best))) best = atoms[i];
  }
  return best.empty() ? atoms : std::vector<std::string>{best};
}

}  // namespace

util::Result<Matcher> Matcher::compile(const Library& lib) {
  auto impl = std::make_unique<Impl>();
  impl->lib = &lib;
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(8 << 20);
  struct Named {
    const std::string* id;
    const std::string* pattern;
    const std::vector<Capture>* captures;
  };
  std::vector<Named> all;
  for (const auto& s : lib.signatures) all.push_back({&s.id, &s.pattern, &s.captures});
  for (const auto& f : lib.facts) all.push_back({&f.id, &f.pattern, &f.captures});
  std::map<std::string, int> atom_ids;
  std::vector<std::string> atom_texts;
  std::set<std::string> gate;
  for (const auto& n : all) {
    Pattern p{std::make_unique<re2::FilteredRE2>(3), {}};
    int id = 0;
    if (p.filter->Add(*n.pattern, opts, &id) != RE2::NoError)
      return util::error(
          fmt::format("log signature {}: the pattern is not RE2: {}", *n.id, RE2(*n.pattern, opts).error()));
    std::vector<std::string> atoms;
    p.filter->Compile(&atoms);
    if (atoms.empty())
      return util::error(
          fmt::format("log signature {}: the pattern holds no literal of 3 characters or more, so it "
                      "would be run on every line",
                      *n.id));
    const auto& groups = p.filter->GetRE2(0).NamedCapturingGroups();
    for (const auto& c : *n.captures)
      if (!groups.count(c.name))
        return util::error(fmt::format("log signature {}: capture {} is not a named group", *n.id, c.name));
    for (const auto& a : gate_atoms(*p.filter, atoms)) gate.insert(a);
    for (const auto& a : atoms) {
      const auto [it, added] = atom_ids.emplace(a, static_cast<int>(atom_texts.size()));
      if (added) atom_texts.push_back(a);
      p.atoms.push_back(it->second);
    }
    impl->patterns.push_back(std::move(p));
  }
  impl->uses.resize(atom_texts.size());
  for (std::size_t i = 0; i < impl->patterns.size(); ++i)
    for (std::size_t j = 0; j < impl->patterns[i].atoms.size(); ++j)
      impl->uses[static_cast<std::size_t>(impl->patterns[i].atoms[j])].emplace_back(static_cast<int>(i),
                                                                                    static_cast<int>(j));
  if (impl->patterns.empty()) return Matcher(std::move(impl));
  RE2::Options lit;
  lit.set_log_errors(false);
  lit.set_literal(true);
  lit.set_max_mem(64 << 20);
  impl->atoms = std::make_unique<RE2::Set>(lit, RE2::UNANCHORED);
  for (const auto& a : atom_texts)
    if (impl->atoms->Add(a, nullptr) < 0) return util::error("log signature atom " + a + " is not a literal");
  if (!impl->atoms->Compile()) return util::error("the log signatures' literals do not fit RE2's memory limit");
  std::string alternation;
  for (const auto& a : gate) alternation += (alternation.empty() ? "" : "|") + RE2::QuoteMeta(a);
  RE2::Options g;
  g.set_log_errors(false);
  g.set_max_mem(64 << 20);
  g.set_never_capture(true);
  impl->gate = std::make_unique<RE2>(alternation, g);
  if (!impl->gate->ok()) return util::error("the log signatures' literals do not compile: " + impl->gate->error());
  return Matcher(std::move(impl));
}

namespace {

std::vector<CaptureValue> captures_of(const RE2& re, const std::vector<Capture>& wanted, std::string_view text) {
  std::vector<CaptureValue> out;
  if (wanted.empty()) return out;
  const int n = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> groups(static_cast<std::size_t>(n) + 1);
  if (!re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED, groups.data(), n + 1))
    return out;
  const auto& names = re.NamedCapturingGroups();
  for (const auto& c : wanted) {
    const auto it = names.find(c.name);
    if (it == names.end()) continue;
    const auto& g = groups[static_cast<std::size_t>(it->second)];
    if (g.data() == nullptr) continue;
    out.push_back({c.name, c.kind, std::string(g.data(), g.size())});
  }
  return out;
}

// Whether s holds word, in any case, without allocating: called on every line that matched
// nothing until five are found.
bool has_icase(std::string_view s, std::string_view word) {
  const auto low = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::search(s.begin(), s.end(), word.begin(), word.end(), [&](char x, char y) { return low(x) == y; }) !=
         s.end();
}

bool error_like(std::string_view s) {
  return has_icase(s, "error") || has_icase(s, "fail") || has_icase(s, "cannot");
}

// Appends s in lower case (ASCII letters only, as FilteredRE2's atoms are).
void to_lower(std::string_view s, std::string& out) {
  const auto at = out.size();
  out.resize(at + s.size());
  std::transform(s.begin(), s.end(), out.begin() + static_cast<std::ptrdiff_t>(at),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
}

}  // namespace

void Matcher::scan(const Line& line, Reading& into) const {
  scan(std::span<const Line>(&line, 1), into);
}

void Matcher::scan(std::span<const Line> lines, Reading& into) const {
  // The lines' lower-case text, one after another: the gate searches it as one text, so that
  // the lines without any literal (most of a log) cost no call of their own.
  thread_local std::string lower;
  thread_local std::vector<std::size_t> starts;
  lower.clear();
  starts.clear();
  std::size_t total = 0;
  for (const auto& l : lines) total += l.text.size() + 1;
  lower.reserve(total);
  for (const auto& l : lines) {
    starts.push_back(lower.size());
    to_lower(l.text, lower);
    lower += '\n';
  }
  starts.push_back(lower.size());
  std::size_t next = 0;  // the first line not yet judged
  std::size_t pos = 0;
  const re2::StringPiece all(lower);
  while (m->gate && pos < lower.size()) {
    re2::StringPiece hit;
    if (!m->gate->Match(all, pos, lower.size(), RE2::UNANCHORED, &hit, 1)) break;
    const auto at = static_cast<std::size_t>(hit.data() - lower.data());
    const auto i = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
    for (; next < i; ++next) no_match(lines[next], into);
    judge(lines[i], std::string_view(lower).substr(starts[i], starts[i + 1] - starts[i] - 1), into);
    next = i + 1;
    pos = starts[i + 1];
  }
  for (; next < lines.size(); ++next) no_match(lines[next], into);
}

void Matcher::no_match(const Line& line, Reading& into) const {
  if (into.error_lines.size() < 5 && error_like(line.text))
    into.error_lines.emplace_back(line.number, util::printable(line.text, 200));
}

void Matcher::judge(const Line& line, std::string_view lower, Reading& into) const {
  std::vector<int> found;
  m->atoms->Match(re2::StringPiece(lower.data(), lower.size()), &found);
  // Each pattern's own atoms that the line holds, by its local index.
  std::map<int, std::vector<int>> local;
  for (const int a : found)
    for (const auto& [pattern, index] : m->uses[static_cast<std::size_t>(a)]) local[pattern].push_back(index);
  const re2::StringPiece text(line.text);
  bool any = false;
  const auto nsig = m->lib->signatures.size();
  for (auto& [pattern, atoms] : local) {
    std::sort(atoms.begin(), atoms.end());
    const auto& p = m->patterns[static_cast<std::size_t>(pattern)];
    std::vector<int> hit;
    if (!p.filter->AllMatches(text, atoms, &hit) || hit.empty()) continue;
    any = true;
    const auto i = static_cast<std::size_t>(pattern);
    const auto& re = p.filter->GetRE2(0);
    if (i < nsig) {
      if (into.matches.size() >= k_max_matches) {
        ++into.matches_dropped;
        continue;
      }
      const auto& sig = m->lib->signatures[i];
      into.matches.push_back(
          {&sig, line.number, util::printable(line.text, 400), captures_of(re, sig.captures, line.text)});
    } else if (into.facts.size() < k_max_facts) {
      const auto& fact = m->lib->facts[i - nsig];
      for (auto& c : captures_of(re, fact.captures, line.text))
        into.facts.push_back({fact.id + "." + c.name, c.kind, std::move(c.value), line.number});
    }
  }
  if (!any) no_match(line, into);
}

}  // namespace cudoctor::explain
