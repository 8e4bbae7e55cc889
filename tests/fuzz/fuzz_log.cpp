// libFuzzer target: the log reader and the signature matcher on any bytes, given in pieces
// whose sizes the input's first byte chooses (a line may be split anywhere between reads).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string_view>

#include "cudoctor/explain/explain.hpp"

namespace {

const cudoctor::explain::Library& library() {
  static const auto lib = [] {
    std::ifstream in(CUDOCTOR_DATA_DIR "/log_signatures.json");
    std::stringstream s;
    s << in.rdbuf();
    auto r = cudoctor::explain::parse_library(s.str());
    if (!r) __builtin_trap();
    return std::move(*r);
  }();
  return lib;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cudoctor::explain;
  static const auto matcher = Matcher::compile(library());
  if (!matcher) __builtin_trap();
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 61;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  Reading r;
  Batch batch(*matcher, r);
  LogReader reader([&](Line&& l) {
    if (l.text.size() > LogReader::k_max_line + LogReader::k_max_line) __builtin_trap();
    batch.add(std::move(l));
  });
  for (std::size_t i = 0; i < text.size(); i += piece) reader.feed(text.substr(i, piece));
  reader.finish();
  batch.flush();
  for (const auto& m : r.matches)
    if (m.line == 0 || m.line > reader.stats().lines) __builtin_trap();
  return 0;
}
