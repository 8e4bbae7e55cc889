#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "cudoctor/cli/options.hpp"

namespace cudoctor::cli {

bool stdout_is_terminal() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

bool use_color(const CommonOptions& o) {
  if (o.color == "always") return true;
  if (o.color == "never") return false;
  // https://no-color.org: any non-empty NO_COLOR turns colour off.
  if (const char* nc = std::getenv("NO_COLOR"); nc && *nc) return false;
  return stdout_is_terminal();
}

}  // namespace cudoctor::cli
