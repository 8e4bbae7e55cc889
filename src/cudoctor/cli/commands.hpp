#pragma once
// The commands, as one table (ninja's kTools): main builds the command line from it and runs
// the row the user named; help, the man page and the shell completions are written from the
// same table and the parser it builds, so they cannot drift from what is accepted.
#include <span>
#include <string_view>

#include "cudoctor/cli/options.hpp"

namespace CLI {
class App;
}

namespace cudoctor::cli {

// The groups of common options (CLI11 groups on the top-level app), named in each row.
inline constexpr std::string_view k_output_group = "Output";
inline constexpr std::string_view k_machine_group = "Machine";
inline constexpr std::string_view k_probe_group = "Probe";
inline constexpr std::string_view k_check_group = "Check";

struct Command {
  std::string_view name;  // the subcommand: "plan"
  std::string_view help;  // one line for the command list
  // Adds the command's own flags and arguments, bound to its part of Options; null for none.
  void (*add_options)(CLI::App& app, Options& o);
  // Runs it and gives the exit code.
  int (*run)(const Options& o);
  std::string_view groups;    // the common option groups that apply, space-separated
  std::string_view examples;  // lines "COMMAND LINE\tWHAT IT DOES"
  std::string_view exits;     // lines "CODE\tMEANING"
  std::string_view env;       // lines "VARIABLE\tHOW IT IS READ"
};

// Every command in --help order. The first runs when none is named.
std::span<const Command> commands();
const Command* find_command(std::string_view name);

}  // namespace cudoctor::cli
