#include <utility>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {

std::string wrap(const std::string& text, std::size_t width, const std::string& indent) {
  std::string out;
  std::size_t col = 0;
  for (const auto word : util::split_ws(text)) {
    // Count UTF-8 code points, not bytes, so "≥" takes one column; an ESC [ … m colour
    // sequence takes none.
    std::size_t len = 0;
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (word[i] == '\033' && i + 1 < word.size() && word[i + 1] == '[') {
        while (i < word.size() && word[i] != 'm') ++i;
        continue;
      }
      len += (static_cast<unsigned char>(word[i]) & 0xC0) != 0x80;
    }
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

std::string ascii_only(std::string_view text) {
  static const std::pair<std::string_view, std::string_view> k_glyphs[] = {
      {"✓", "+"},   {"✗", "x"},  {"·", "-"}, {"←", "<-"},   {"→", "->"}, {"≥", ">="}, {"≤", "<="},
      {"…", "..."}, {"—", "--"}, {"–", "-"}, {"×", "x"},    {"−", "-"},  {"‘", "'"},  {"’", "'"},
      {"“", "\""},  {"”", "\""}, {"µ", "u"}, {"°", " deg"}, {"≈", "~"},  {"⚠", "!"},
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += text[i++];
      continue;
    }
    bool mapped = false;
    for (const auto& [glyph, ascii] : k_glyphs)
      if (text.substr(i, glyph.size()) == glyph) {
        out += ascii;
        i += glyph.size();
        mapped = true;
        break;
      }
    if (mapped) continue;
    // Another code point: its lead byte and continuation bytes become one '?'.
    out += '?';
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return out;
}

}  // namespace cudoctor::render
