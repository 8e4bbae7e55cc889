#include <langinfo.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <cstring>
#include <string>

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

std::size_t output_width() {
  std::size_t cols = 0;
  if (const char* c = std::getenv("COLUMNS"); c && *c) {
    char* end = nullptr;
    const auto v = std::strtoul(c, &end, 10);
    if (end && *end == '\0') cols = v;
  }
  winsize ws{};
  if (cols == 0 && ::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
  if (cols == 0) cols = 80;
  return cols < 40 ? 40 : cols > 100 ? 100 : cols;
}

bool utf8_locale() {
  // The environment's locale for character types only: nothing else of cudoctor's output
  // (numbers, JSON) may change with it.
  const char* old = std::setlocale(LC_CTYPE, nullptr);
  const std::string saved = old ? old : "C";
  if (!std::setlocale(LC_CTYPE, "")) {
    // A locale that is named but not installed (LANG=en_US.UTF-8 in a slim container): the
    // terminal behind it still speaks what the name says.
    const char* name = nullptr;
    for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"})
      if (const char* v = std::getenv(var); v && *v && !name) name = v;
    const std::string n = name ? name : "";
    return n.find("UTF-8") != std::string::npos || n.find("utf8") != std::string::npos ||
           n.find("UTF8") != std::string::npos || n.find("utf-8") != std::string::npos;
  }
  const char* set = nl_langinfo(CODESET);
  const bool utf8 = set && (std::strcmp(set, "UTF-8") == 0 || std::strcmp(set, "utf8") == 0);
  std::setlocale(LC_CTYPE, saved.c_str());
  return utf8;
}

}  // namespace cudoctor::cli
