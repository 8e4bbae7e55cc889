#pragma once
// The commands, as one table (ninja's kTools): main builds the command line from it and runs
// the row the user named. Each row's functions live in cli/<name>_command.cpp.
#include <span>
#include <string_view>

#include "cudoctor/cli/options.hpp"

namespace CLI {
class App;
}

namespace cudoctor::cli {

struct Command {
  std::string_view name;  // the subcommand: "plan"
  std::string_view help;  // one line for --help
  // Adds the command's own flags and arguments, bound to its part of Options; null for none.
  void (*add_options)(CLI::App& app, Options& o);
  // Runs it and gives the exit code.
  int (*run)(const Options& o);
};

// Every command in --help order. The first runs when none is named.
std::span<const Command> commands();

}  // namespace cudoctor::cli
