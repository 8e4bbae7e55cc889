#pragma once
// Renderers: they read a report and print it; they decide nothing.
#include <string>

#include "cudoctor/report/report.hpp"

namespace cudoctor::render {

struct Options {
  bool color = false;    // ANSI colour; the caller decides (terminal, NO_COLOR, --color)
  bool verbose = false;  // evidence under every line, details of info lines
  std::string tool_version;
};

std::string text(const report::Report& r, const Options& o);
std::string json(const report::Report& r, const Options& o);
std::string markdown(const report::Report& r, const Options& o);

// Replaces the host name, the user name and home directories with placeholders, as whole
// words, so a report can be shared.
std::string redact(const std::string& rendered, const report::Report& r);

// Wraps text to width columns; every line after the first is indented by indent.
std::string wrap(const std::string& text, std::size_t width, const std::string& indent);

}  // namespace cudoctor::render
