#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {

std::string wrap(const std::string& text, std::size_t width, const std::string& indent) {
  std::string out;
  std::size_t col = 0;
  for (const auto word : util::split_ws(text)) {
    // Count UTF-8 code points, not bytes, so "≥" takes one column.
    std::size_t len = 0;
    for (const char c : word) len += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (col > 0 && col + 1 + len > width) {
      out += "\n" + indent;
      col = 0;
    } else if (col > 0) {
      out += ' ';
      ++col;
    }
    out += word;
    col += len;
  }
  return out;
}

namespace {
bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

std::string replace_word(const std::string& s, const std::string& word, const std::string& with) {
  if (word.empty()) return s;
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    const auto hit = s.find(word, pos);
    if (hit == std::string::npos) break;
    const bool left = hit == 0 || !word_char(s[hit - 1]);
    const bool right = hit + word.size() >= s.size() || !word_char(s[hit + word.size()]);
    out += s.substr(pos, hit - pos);
    out += (left && right) ? with : word;
    pos = hit + word.size();
  }
  return out + s.substr(pos);
}
}  // namespace

std::string redact(const std::string& rendered, const report::Report& r) {
  auto out = rendered;
  const auto& h = r.snapshot.host;
  if (!h.user.empty() && h.user != "root") {
    out = replace_word(out, "/home/" + h.user, "/home/<user>");
    out = replace_word(out, h.user, "<user>");
  }
  if (!h.hostname.empty() && h.hostname != "localhost") out = replace_word(out, h.hostname, "<host>");
  return out;
}

}  // namespace cudoctor::render
