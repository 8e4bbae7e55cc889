// The matcher: every signature and fact pattern in one RE2::Set, so that a line is searched
// once whatever the number of patterns, then only the patterns that matched are run for their
// captures. RE2 runs in time linear in the line: no pattern can make a hostile log hang it.
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>

#include "cudoctor/explain/explain.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::explain {

struct Matcher::Impl {
  const Library* lib = nullptr;
  std::vector<std::unique_ptr<RE2>> res;  // signatures, then facts
  std::unique_ptr<RE2::Set> set;
};

Matcher::Matcher(std::unique_ptr<Impl> impl) : m(std::move(impl)) {}
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;
Matcher::~Matcher() = default;

const Library& Matcher::library() const {
  return *m->lib;
}

util::Result<Matcher> Matcher::compile(const Library& lib) {
  auto impl = std::make_unique<Impl>();
  impl->lib = &lib;
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(64 << 20);
  impl->set = std::make_unique<RE2::Set>(opts, RE2::UNANCHORED);
  std::vector<const std::string*> patterns;
  for (const auto& s : lib.signatures) patterns.push_back(&s.pattern);
  for (const auto& f : lib.facts) patterns.push_back(&f.pattern);
  for (const auto* p : patterns) {
    std::string err;
    if (impl->set->Add(*p, &err) < 0) return util::error("log signature pattern " + *p + ": " + err);
    impl->res.push_back(std::make_unique<RE2>(*p, opts));
  }
  if (!impl->set->Compile()) return util::error("the log signatures do not fit RE2's memory limit");
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

bool error_like(std::string_view s) {
  return util::contains_icase(s, "error") || util::contains_icase(s, "fail") || util::contains_icase(s, "cannot");
}

}  // namespace

void Matcher::scan(const Line& line, Reading& into) const {
  std::vector<int> hits;
  const re2::StringPiece text(line.text);
  if (!m->set->Match(text, &hits)) {
    if (into.error_lines.size() < 5 && error_like(line.text))
      into.error_lines.emplace_back(line.number, util::printable(line.text, 200));
    return;
  }
  std::sort(hits.begin(), hits.end());
  const auto nsig = m->lib->signatures.size();
  for (const int h : hits) {
    const auto i = static_cast<std::size_t>(h);
    const auto& re = *m->res[i];
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
