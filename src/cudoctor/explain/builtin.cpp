// The signatures compiled into the binary (data/log_signatures.json), apart from the parser so
// that the fuzz target links without the generated knowledge base.
#include <stdexcept>

#include "cudoctor/explain/signatures.hpp"
#include "cudoctor/kb/embedded.hpp"

namespace cudoctor::explain {

const Library& builtin_library() {
  static const Library lib = [] {
    for (const auto& f : kb::embedded_files())
      if (f.name == "log_signatures.json") {
        auto r = parse_library(f.text);
        if (!r) throw std::runtime_error(r.error());  // a build with broken data is a bug: tests load it
        return std::move(*r);
      }
    throw std::runtime_error("log_signatures.json is not compiled in");
  }();
  return lib;
}

}  // namespace cudoctor::explain
