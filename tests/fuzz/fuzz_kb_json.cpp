// libFuzzer target: knowledge-base text as --kb DIR files give it, read by kb::read_json
// (RapidJSON's reader building nlohmann's document) and by nlohmann's own parser. Where the
// text has no NUL byte the two must agree: both reject it, or both build the same document
// (but for an exponent past a double's range, below).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cudoctor/kb/json_read.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ours = cudoctor::kb::read_json(text);
  if (text.find('\0') != std::string_view::npos) {
    if (ours) __builtin_trap();  // a NUL byte is never JSON here
    return 0;
  }
  const auto theirs = nlohmann::json::parse(text, nullptr, false);
  // The one difference kept on purpose: RapidJSON refuses an exponent past a double's range
  // before it looks at the digits, so "0e400" (which nlohmann reads as 0.0) is an error here.
  if (!ours && !theirs.is_discarded() && ours.error().starts_with("Number too big to be stored in double.")) return 0;
  if (theirs.is_discarded() != !ours) __builtin_trap();  // one accepts what the other rejects
  if (ours && *ours != theirs) __builtin_trap();         // or they read different documents
  return 0;
}
