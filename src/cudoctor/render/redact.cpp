// --redact: user names, home directories and host names out of a rendered report.
#include <algorithm>

#include "cudoctor/render/html.hpp"
#include "cudoctor/render/html_page.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {
namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
// What can continue a path component, so "/home/alice" does not match "/home/alice2".
bool name_char(char c) {
  return alnum(c) || c == '.' || c == '_' || c == '-';
}

struct Hit {
  std::size_t pos = 0;
  std::size_t len = 0;
  const char* with = "";
};

enum class Match { token, path_prefix, host };

// A host name is replaced only as a whole token: not where it is a piece of a path or of a
// longer name ("/usr/local", "~/.venvs/gpu", "lib/"), so a host called "local" leaves paths
// alone. A '.' after it ends a sentence only when no name character follows.
bool host_left(std::string_view s, std::size_t pos) {
  if (pos == 0) return true;
  const char c = s[pos - 1];
  return !name_char(c) && c != '/' && c != '~';
}
bool host_right(std::string_view s, std::size_t end) {
  if (end == s.size()) return true;
  const char c = s[end];
  if (c == '.') return end + 1 == s.size() || !name_char(s[end + 1]);
  return !name_char(c) && c != '/';
}

// Every occurrence of needle in haystack that stands on the boundaries the kind asks for.
void find_all(std::string_view haystack, const std::string& needle, Match kind, const char* with,
              std::vector<Hit>& hits) {
  if (needle.empty()) return;
  for (auto pos = haystack.find(needle); pos != std::string_view::npos; pos = haystack.find(needle, pos + 1)) {
    const auto end = pos + needle.size();
    bool left = kind == Match::path_prefix || pos == 0 || !alnum(haystack[pos - 1]);
    bool right = end == haystack.size() || (kind == Match::token ? !alnum(haystack[end]) : !name_char(haystack[end]));
    if (kind == Match::host) {
      left = host_left(haystack, pos);
      right = host_right(haystack, end);
    }
    if (left && right) hits.push_back({pos, needle.size(), with});
  }
}

void add(std::vector<std::string>& v, std::string s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
}

}  // namespace

Secrets secrets_of(const snapshot::HostFacts& h) {
  Secrets s;
  // A one-letter name would blank out every "a" of the report's own sentences.
  for (const auto& n : h.private_names)
    if (n.size() >= 2 && n != "root") add(s.names, n);
  if (h.user.size() >= 2 && h.user != "root") add(s.names, h.user);
  for (const auto& home : h.private_homes)
    if (home.size() > 1) add(s.homes, home);
  for (const auto& name : h.host_names) add(s.hosts, util::to_lower(name));
  if (!h.hostname.empty() && h.hostname != "localhost") add(s.hosts, util::to_lower(h.hostname));
  return s;
}

namespace {

// The placeholders, and how a secret is spelled in the output: as it is in text, markdown and
// JSON; with its characters escaped in HTML, where the placeholders are written as references
// too (a raw "<host>" would be an element) and no match may begin or end inside a reference
// (a user called "amp" must leave "&amp;" whole).
struct Spelling {
  const char* home = "<home>";
  const char* user = "<user>";
  const char* host = "<host>";
  bool html = false;
  // As the output spells it: in prose, and inside a JSON string (where " and \ are escaped).
  std::vector<std::string> of(std::string_view secret) const {
    std::string json;
    for (const char c : secret) json += c == '"' || c == '\\' ? std::string{'\\', c} : std::string(1, c);
    std::vector<std::string> out{std::string(secret)};
    if (json != secret) out.push_back(json);
    if (html)
      for (auto& o : out) o = html_page::escape(o);
    return out;
  }
};

// Where a page holds text of the report: outside tags, comments, the style sheet and the
// script. Secrets are replaced there only, so the page's own markup (a user called "code", a
// host called "tools", an element's id) is never touched. Half-open [begin, end) spans.
std::vector<std::pair<std::size_t, std::size_t>> html_text_spans(std::string_view page) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t at = 0;
  const auto skip_to = [&](std::size_t from, std::string_view end) {
    const auto e = page.find(end, from);
    return e == std::string_view::npos ? page.size() : e + end.size();
  };
  while (at < page.size()) {
    const auto lt = page.find('<', at);
    if (lt == std::string_view::npos) {
      spans.emplace_back(at, page.size());
      break;
    }
    if (lt > at) spans.emplace_back(at, lt);
    const auto rest = util::to_lower(page.substr(lt, 8));
    if (rest.starts_with("<!--"))
      at = skip_to(lt, "-->");
    else if (rest.starts_with("<style"))
      at = skip_to(lt, "</style>");
    else if (rest.starts_with("<script"))
      at = skip_to(lt, "</script>");
    else
      at = skip_to(lt, ">");
  }
  return spans;
}

bool inside(const std::vector<std::pair<std::size_t, std::size_t>>& spans, std::size_t pos, std::size_t end) {
  auto it = std::upper_bound(spans.begin(), spans.end(), std::make_pair(pos, static_cast<std::size_t>(-1)));
  if (it == spans.begin()) return false;
  --it;
  return it->first <= pos && end <= it->second;
}

// Inside a character reference: '&' then letters, digits or '#' up to pos, and ';' after.
bool in_reference(std::string_view s, std::size_t pos, std::size_t end) {
  if (pos == 0) return false;
  const auto amp = s.rfind('&', pos - 1);
  if (amp == std::string_view::npos) return false;
  for (auto i = amp + 1; i < pos; ++i)
    if (!alnum(s[i]) && s[i] != '#') return false;
  for (auto i = end; i < s.size(); ++i) {
    if (s[i] == ';') return true;
    if (!alnum(s[i])) return false;
  }
  return false;
}

std::string redact_spelled(std::string_view rendered, const Secrets& s, const Spelling& w) {
  std::vector<Hit> hits;
  for (const auto& home : s.homes) {
    auto h = home;
    while (h.size() > 1 && h.back() == '/') h.pop_back();
    for (const auto& spelt : w.of(h)) find_all(rendered, spelt, Match::path_prefix, w.home, hits);
  }
  for (const auto& n : s.names)
    for (const auto& spelt : w.of(n)) find_all(rendered, spelt, Match::token, w.user, hits);
  // Host names are not case-sensitive (RFC 4343); ASCII lowering keeps every byte's place.
  const auto lower = util::to_lower(rendered);
  for (const auto& h : s.hosts)
    for (const auto& spelt : w.of(util::to_lower(h))) find_all(lower, spelt, Match::host, w.host, hits);
  if (w.html) {
    const auto text = html_text_spans(rendered);
    std::erase_if(hits, [&](const Hit& h) {
      return !inside(text, h.pos, h.pos + h.len) || in_reference(rendered, h.pos, h.pos + h.len);
    });
  }
  // The first match wins; at the same place the longest (an FQDN over its short name).
  std::sort(hits.begin(), hits.end(),
            [](const Hit& a, const Hit& b) { return a.pos != b.pos ? a.pos < b.pos : a.len > b.len; });
  std::string out;
  std::size_t at = 0;
  for (const auto& h : hits) {
    if (h.pos < at) continue;
    out.append(rendered.substr(at, h.pos - at));
    out += h.with;
    at = h.pos + h.len;
  }
  out.append(rendered.substr(at));
  return out;
}

}  // namespace

std::string redact(std::string_view rendered, const Secrets& s) {
  return redact_spelled(rendered, s, Spelling{});
}

std::string redact_html(std::string_view page, const Secrets& s) {
  return redact_spelled(page, s, Spelling{"&lt;home&gt;", "&lt;user&gt;", "&lt;host&gt;", true});
}

std::string redact(const std::string& rendered, const report::Report& r) {
  return redact(std::string_view(rendered), secrets_of(r.snapshot.host));
}

}  // namespace cudoctor::render
