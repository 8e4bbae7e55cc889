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

}  // namespace cudoctor::render
