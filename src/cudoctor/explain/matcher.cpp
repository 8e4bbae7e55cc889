// The matcher. RE2's FilteredRE2 takes from every pattern the literal strings a match must
// contain ("atoms"); one RE2::Set of those literals is searched in each line, and only the
// patterns whose atoms are there (or that have none) are run. Most lines of a log match no
// signature and cost one literal search. RE2 runs in time linear in the line: no pattern can
// make a hostile log hang it.
#include <re2/filtered_re2.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <set>
#include <span>

#include "cudoctor/explain/explain.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::explain {

struct Matcher::Impl {
  const Library* lib = nullptr;
  re2::FilteredRE2 filter{3};       // signatures, then facts, in that order of ids
  std::unique_ptr<RE2::Set> atoms;  // nullptr when no pattern has an atom
  // Whether a line holds any atom at all: one expression that stops at the first, much
  // cheaper than the set, which must find them all. Most lines hold none.
  std::unique_ptr<RE2> any_atom;
};

Matcher::Matcher(std::unique_ptr<Impl> impl) : m(std::move(impl)) {}
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;
Matcher::~Matcher() = default;

const Library& Matcher::library() const {
  return *m->lib;
}

namespace {

// The literals a line must hold for any pattern to match: of each pattern, its longest atom
// that every match contains (FilteredRE2 keeps an atom the pattern cannot match without), or,
// where no single atom is needed (an alternation), all its atoms. Short atoms that only come
// with a longer one ("lib" beside "not found in the system path") stay out, so that a
// traceback's site-packages paths pass no literal.
util::Result<std::set<std::string>> gate_literals(const std::vector<const std::string*>& patterns,
                                                  const RE2::Options& opts) {
  std::set<std::string> out;
  for (const auto* p : patterns) {
    re2::FilteredRE2 one(3);
    int id = 0;
    one.Add(*p, opts, &id);
    std::vector<std::string> atoms;
    one.Compile(&atoms);
    if (atoms.empty())
      return util::error("log signature pattern " + *p +
                         " holds no literal of 3 characters or more: it would be run on every line");
    std::string best;
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      std::vector<int> without, ids;
      for (std::size_t j = 0; j < atoms.size(); ++j)
        if (j != i) without.push_back(static_cast<int>(j));
      one.AllPotentials(without, &ids);
      if (ids.empty() && atoms[i].size() > best.size()) best = atoms[i];
    }
    if (!best.empty())
      out.insert(best);
    else
      out.insert(atoms.begin(), atoms.end());
  }
  return out;
}

}  // namespace

util::Result<Matcher> Matcher::compile(const Library& lib) {
  auto impl = std::make_unique<Impl>();
  impl->lib = &lib;
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(8 << 20);
  std::vector<const std::string*> patterns;
  for (const auto& s : lib.signatures) patterns.push_back(&s.pattern);
  for (const auto& f : lib.facts) patterns.push_back(&f.pattern);
  for (const auto* p : patterns) {
    int id = 0;
    if (impl->filter.Add(*p, opts, &id) != RE2::NoError)
      return util::error("log signature pattern " + *p + " is not RE2");
  }
  const auto gate_atoms = gate_literals(patterns, opts);
  if (!gate_atoms) return util::error(gate_atoms.error());
  std::vector<std::string> atoms;
  impl->filter.Compile(&atoms);
  if (!atoms.empty()) {
    RE2::Options lit;
    lit.set_log_errors(false);
    lit.set_literal(true);
    lit.set_max_mem(64 << 20);
    impl->atoms = std::make_unique<RE2::Set>(lit, RE2::UNANCHORED);
    for (const auto& a : atoms)
      if (impl->atoms->Add(a, nullptr) < 0) return util::error("log signature atom " + a + " is not a literal");
    if (!impl->atoms->Compile()) return util::error("the log signatures' literals do not fit RE2's memory limit");
    std::string alternation;
    for (const auto& a : *gate_atoms) alternation += (alternation.empty() ? "" : "|") + RE2::QuoteMeta(a);
    RE2::Options gate;
    gate.set_log_errors(false);
    gate.set_max_mem(64 << 20);
    gate.set_never_capture(true);
    impl->any_atom = std::make_unique<RE2>(alternation, gate);
    if (!impl->any_atom->ok())
      return util::error("the log signatures' literals do not compile: " + impl->any_atom->error());
  }
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

void to_lower(std::string_view s, std::string& out) {
  for (const char c : s) out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
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
  for (const auto& l : lines) {
    starts.push_back(lower.size());
    to_lower(l.text, lower);
    lower += '\n';
  }
  starts.push_back(lower.size());
  std::size_t next = 0;  // the first line not yet judged
  std::size_t pos = 0;
  const re2::StringPiece all(lower);
  while (m->atoms && pos < lower.size()) {
    re2::StringPiece hit;
    if (!m->any_atom->Match(all, pos, lower.size(), RE2::UNANCHORED, &hit, 1)) break;
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
  std::vector<int> atoms, hits;
  m->atoms->Match(re2::StringPiece(lower.data(), lower.size()), &atoms);
  const re2::StringPiece text(line.text);
  if (atoms.empty() || !m->filter.AllMatches(text, atoms, &hits)) return no_match(line, into);
  std::sort(hits.begin(), hits.end());
  const auto nsig = m->lib->signatures.size();
  for (const int h : hits) {
    const auto i = static_cast<std::size_t>(h);
    const auto& re = m->filter.GetRE2(h);
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
}

}  // namespace cudoctor::explain
