#include "cudoctor/explain/log_reader.hpp"

#include <re2/re2.h>

namespace cudoctor::explain {

namespace {

// Leading noise, one alternative per kind of prefix; taken off repeatedly (a journal line may
// carry a dmesg timestamp after its own).
const RE2& prefix_re() {
  static const RE2 re(
      "^(?:"
      "\\[\\s*\\d+\\.\\d+\\]\\s?"  // dmesg [  12.345678]
      "|\\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d \\d{4}\\]\\s?"  // dmesg -T
      "|\\d{4}-\\d\\d-\\d\\d[T ]\\d\\d:\\d\\d:\\d\\d(?:[.,]\\d+)?(?:Z|[+-]\\d\\d:?\\d\\d)?\\s+"         // ISO 8601
      "|[A-Z][a-z]{2} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d [\\w.-]+ [\\w./@-]+(?:\\[\\d+\\])?:\\s"  // syslog, journal
      "|\\[(?:rank|default)?\\d+\\]:\\s?"                                                     // [rank0]: torchrun
      "|[IWEF]\\d{4} \\d\\d:\\d\\d:\\d+\\.\\d+\\s+\\d+\\s+"                                   // absl I0000 00:00:…
      "|[\\w.-]+-\\d+\\s+\\|\\s"                                                              // docker compose svc-1 |
      ")");
  return re;
}

bool digit(char c) {
  return c >= '0' && c <= '9';
}
bool upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool lower(char c) {
  return c >= 'a' && c <= 'z';
}

// Whether the line may start with a prefix prefix_re() takes: decided on its first bytes, so
// that most lines never run the expression.
bool may_have_prefix(std::string_view s) {
  if (s.size() < 4) return false;
  if (s[0] == '[' || digit(s[0])) return true;                                                 // dmesg, [rank0]:, ISO
  if ((s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F') && digit(s[1])) return true;  // absl
  if (upper(s[0]) && lower(s[1]) && lower(s[2]) && s[3] == ' ') return true;                   // syslog month
  if (!lower(s[0])) return false;  // compose services are named in lower case: svc-1  | …
  const auto bar = s.substr(0, 80).find(" | ");
  return bar != std::string_view::npos && bar > 0 && (digit(s[bar - 1]) || s[bar - 1] == ' ');
}

bool is_control(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b && c != '\f') || c == 0x7f;
}

// Escape sequences: CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), and two-byte ones.
std::string without_escapes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out += s[i];
      continue;
    }
    if (i + 1 >= s.size()) break;
    const char k = s[i + 1];
    if (k == '[') {
      std::size_t j = i + 2;
      while (j < s.size() && !(s[j] >= 0x40 && s[j] <= 0x7e)) ++j;
      i = j;
    } else if (k == ']') {
      std::size_t j = i + 2;
      while (j < s.size() && s[j] != '\x07' && !(s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\')) ++j;
      i = (j < s.size() && s[j] == '\x1b') ? j + 1 : j;
    } else {
      ++i;
    }
  }
  return out;
}

// A kernel message the kernel wrapped: an NVRM: line that goes on with lower case or an indent.
bool continues_nvrm(std::string_view prev, std::string_view next) {
  constexpr std::string_view k = "NVRM: ";
  if (prev.substr(0, k.size()) != k || next.substr(0, k.size()) != k || next.size() <= k.size()) return false;
  const unsigned char c = static_cast<unsigned char>(next[k.size()]);
  return c == ' ' || (c >= 'a' && c <= 'z');
}

}  // namespace

std::string clean_line(std::string_view raw) {
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
  if (const auto cr = raw.rfind('\r'); cr != std::string_view::npos) raw.remove_prefix(cr + 1);  // progress redraws
  std::string s = raw.find('\x1b') == std::string_view::npos ? std::string(raw) : without_escapes(raw);
  re2::StringPiece rest(s);
  for (int i = 0; i < 4 && may_have_prefix(std::string_view(rest.data(), rest.size())); ++i)
    if (!RE2::Consume(&rest, prefix_re())) break;
  std::string out(rest.data(), rest.size());
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out;
}

void LogReader::feed(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size() && m_stats.sniffed < k_sniff; ++i, ++m_stats.sniffed)
    if (is_control(static_cast<unsigned char>(bytes[i]))) ++m_stats.control_bytes;
  m_stats.bytes += bytes.size();
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const auto part = bytes.substr(0, nl);
    if (!m_cut) {
      const auto room = k_max_line - m_raw.size();
      m_raw.append(part.substr(0, room));
      if (part.size() > room) m_cut = true;
    }
    if (nl == std::string_view::npos) break;
    end_physical_line();
    bytes.remove_prefix(nl + 1);
  }
}

void LogReader::finish() {
  if (!m_raw.empty() || m_cut) end_physical_line();
  if (m_has_pending) m_sink(std::move(m_pending));
  m_has_pending = false;
}

bool LogReader::looks_binary() const {
  return m_stats.sniffed > 0 && m_stats.control_bytes * 10 > m_stats.sniffed;
}

void LogReader::end_physical_line() {
  ++m_stats.lines;
  if (m_cut) ++m_stats.cut_lines;
  take(Line{m_stats.lines, clean_line(m_raw)});
  m_raw.clear();
  m_cut = false;
}

void LogReader::take(Line line) {
  if (m_has_pending && continues_nvrm(m_pending.text, line.text) && m_pending.text.size() < k_max_line) {
    m_pending.text += ' ';
    m_pending.text.append(line.text, 6, std::string::npos);
    return;
  }
  if (m_has_pending) m_sink(std::move(m_pending));
  m_pending = std::move(line);
  m_has_pending = true;
}

}  // namespace cudoctor::explain
