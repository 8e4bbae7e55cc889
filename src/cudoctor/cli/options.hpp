#pragma once
// Options shared by every subcommand, as the command line gives them.
#include <string>

namespace cudoctor::cli {

struct CommonOptions {
  std::string format = "text";  // text | json | markdown
  bool json = false;            // --json: --format json
  bool verbose = false;
  std::string root = "/";
  bool no_runtime = false;
  double timeout_s = 10.0;
  bool redact = false;
  std::string color = "auto";  // auto | always | never
};

// Whether to colour: --color, then NO_COLOR (any value), then whether stdout is a terminal.
bool use_color(const CommonOptions& o);
bool stdout_is_terminal();

}  // namespace cudoctor::cli
