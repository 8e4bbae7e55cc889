#include "cudoctor/ld/dst.hpp"

#include <cctype>
#include <utility>

namespace cudoctor::ld {

std::string substitute(const std::string& s, const std::string& origin, const std::string& lib,
                       const std::string& platform) {
  const std::pair<const char*, const std::string*> tokens[] = {
      {"ORIGIN", &origin}, {"LIB", &lib}, {"PLATFORM", &platform}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] != '$') {
      out += s[i++];
      continue;
    }
    bool done = false;
    for (const auto& [name, value] : tokens) {
      const std::string plain = std::string("$") + name;
      const std::string braced = std::string("${") + name + "}";
      // The plain form ends where a name character could not continue it (is_dst).
      const auto ends_plain = [&] {
        const auto after = i + plain.size();
        return after == s.size() || !(std::isalnum(static_cast<unsigned char>(s[after])) || s[after] == '_');
      };
      if (s.compare(i, braced.size(), braced) == 0) {
        out += *value;
        i += braced.size();
        done = true;
      } else if (s.compare(i, plain.size(), plain) == 0 && ends_plain()) {
        out += *value;
        i += plain.size();
        done = true;
      }
      if (done) break;
    }
    if (!done) out += s[i++];
  }
  return out;
}

}  // namespace cudoctor::ld
