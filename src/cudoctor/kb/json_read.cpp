#include "cudoctor/kb/json_read.hpp"

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <vector>

namespace cudoctor::kb {
namespace {

using nlohmann::json;

// Builds the document as the SAX events arrive: the open containers on a stack, the key an
// object's next value goes under beside them.
class Builder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Builder> {
 public:
  json done;
  std::string bad_number;  // a number nlohmann would not take ("1e400"), when one stopped the reader

  bool Null() { return put(json(nullptr)); }
  bool Bool(bool b) { return put(json(b)); }
  // Numbers come as their text (kParseNumbersAsStringsFlag): RapidJSON 1.1.0's own
  // full-precision conversion passes zero to __builtin_clzll on "0e40" (undefined behaviour,
  // found by fuzz_kb_json), and its normal one rounds differently from strtod. An integer
  // that fits 64 bits is one, unsigned unless negative, as nlohmann makes it; anything else
  // nlohmann converts, so the double and the out-of-range cases are its own.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view text(s, n);
    if (text.find_first_of(".eE") == std::string_view::npos) {
      if (text.front() == '-') {
        std::int64_t v = 0;
        if (const auto r = std::from_chars(s, s + n, v); r.ec == std::errc() && r.ptr == s + n) return put(json(v));
      } else {
        std::uint64_t v = 0;
        if (const auto r = std::from_chars(s, s + n, v); r.ec == std::errc() && r.ptr == s + n) return put(json(v));
      }
    }
    auto v = json::parse(text, nullptr, false);
    if (v.is_discarded()) {
      bad_number = std::string(text);
      return false;
    }
    return put(std::move(v));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) { return put(json(std::string(s, n))); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    m_keys.back().assign(s, n);
    return true;
  }
  bool StartObject() { return open(json::object()); }
  bool StartArray() { return open(json::array()); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  std::vector<json> m_open;         // the containers not yet closed, outermost first
  std::vector<std::string> m_keys;  // beside each: an object's current key

  bool put(json v) {
    if (m_open.empty()) {
      done = std::move(v);
    } else if (auto& top = m_open.back(); top.is_object()) {
      // A repeated key: the last value, as nlohmann keeps it.
      top.get_ref<json::object_t&>().insert_or_assign(std::move(m_keys.back()), std::move(v));
    } else {
      top.push_back(std::move(v));
    }
    return true;
  }
  bool open(json container) {
    m_open.push_back(std::move(container));
    m_keys.emplace_back();
    return true;
  }
  bool close() {
    auto v = std::move(m_open.back());
    m_open.pop_back();
    m_keys.pop_back();
    return put(std::move(v));
  }
};

// Where the text stops being well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF); npos when it is. Checked once over the whole text, eight ASCII
// bytes at a time, instead of code point by code point inside the reader: outside strings
// JSON is ASCII anyway, so the same texts pass.
std::size_t bad_utf8(std::string_view t) {
  const auto* p = reinterpret_cast<const unsigned char*>(t.data());
  const std::size_t n = t.size();
  std::size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if ((w & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

util::Result<json> read_json(std::string_view text) {
  if (const auto bad = bad_utf8(text); bad != std::string_view::npos)
    return util::error(fmt::format("invalid UTF-8 at byte {}", bad));
  Builder b;
  rapidjson::Reader reader;
  rapidjson::MemoryStream in(text.data(), text.size());
  // Iterative: a hostile --kb file nested a million deep costs heap, not the stack.
  constexpr unsigned k_flags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;
  const auto ok = reader.Parse<k_flags>(in, b);
  // The stream reads a NUL byte as its end: one before the text's end is not JSON.
  if (!ok.IsError() && in.Tell() < text.size()) return util::error(fmt::format("a NUL byte at byte {}", in.Tell()));
  if (ok.IsError()) {
    const auto* what = b.bad_number.empty() ? rapidjson::GetParseError_En(ok.Code()) : "Number out of range.";
    const auto at = std::min<std::size_t>(ok.Offset(), text.size());
    const auto before = text.substr(0, at);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto nl = before.rfind('\n');
    const auto column = 1 + (nl == std::string_view::npos ? at : at - nl - 1);
    return util::error(fmt::format("{} at line {}, column {}", what, line, column));
  }
  return std::move(b.done);
}

}  // namespace cudoctor::kb
