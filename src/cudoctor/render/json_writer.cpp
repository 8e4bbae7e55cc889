#include "cudoctor/render/json_writer.hpp"

#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"

namespace cudoctor::render {

void JsonWriter::newline() {
  m_out.push_back('\n');
  m_out.append(2 * m_empty.size(), ' ');
}

void JsonWriter::before_value() {
  if (m_after_key) {
    m_after_key = false;
    return;
  }
  if (m_empty.empty()) return;  // the document itself
  if (!m_empty.back()) m_out.push_back(',');
  m_empty.back() = false;
  newline();
}

void JsonWriter::open(char c) {
  before_value();
  m_out.push_back(c);
  m_empty.push_back(true);
}

void JsonWriter::close(char c) {
  const bool empty = m_empty.back();
  m_empty.pop_back();
  if (!empty) newline();
  m_out.push_back(c);
}

void JsonWriter::key(std::string_view k) {
  before_value();
  string(k);
  m_out += ": ";
  m_after_key = true;
}

void JsonWriter::value(std::string_view s) {
  before_value();
  string(s);
}

void JsonWriter::value(bool b) {
  before_value();
  m_out += b ? "true" : "false";
}

void JsonWriter::value(std::int64_t n) {
  before_value();
  m_out += std::to_string(n);
}

void JsonWriter::null() {
  before_value();
  m_out += "null";
}

void JsonWriter::strings(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& s : v) value(s);
  end_array();
}

void JsonWriter::string(std::string_view s) {
  // Printable ASCII, the paths and names of nearly every tree, is copied here in runs between
  // the quotes and backslashes it escapes; anything else (controls, DEL, non-ASCII, invalid
  // UTF-8) is written as json_text writes it, so the escapes are one.
  const auto start = m_out.size();
  m_out.push_back('"');
  std::size_t from = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F) {
      m_out.resize(start);
      const auto text = json_text(nlohmann::json(std::string(s)));
      m_out.append(text, 0, text.size() - 1);  // without its closing newline
      return;
    }
    if (c == '"' || c == '\\') {
      m_out.append(s, from, i - from);
      m_out.push_back('\\');
      from = i;
    }
  }
  m_out.append(s, from, std::string_view::npos);
  m_out.push_back('"');
}

}  // namespace cudoctor::render
