#pragma once
// JSON written straight into a string, byte for byte what json_text prints for the same
// document (nlohmann's dump with an indent of 2, then json_text's escapes), without building
// the document first: ldd --json over a toolkit's libraries writes a megabyte of it, and the
// document's nodes cost more than the resolving. The caller gives an object's keys in sorted
// order, as nlohmann's std::map holds them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cudoctor::render {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : m_out(out) {}
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view k);
  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(bool b);
  void value(std::int64_t n);
  void value(int n) { value(static_cast<std::int64_t>(n)); }
  void null();
  void strings(const std::vector<std::string>& v);

 private:
  std::string& m_out;
  std::vector<bool> m_empty;  // per open container: nothing written in it yet
  bool m_after_key = false;   // the next value follows "key": on its line

  void open(char c);
  void close(char c);
  void before_value();
  void newline();
  void string(std::string_view s);
};

}  // namespace cudoctor::render
