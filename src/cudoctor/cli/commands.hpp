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

// The environment every command that reads the machine reads, and what the output reads (the
// Output group's); the exit codes all commands share. Rows, help and cudoctor(1) use these.
inline constexpr std::string_view k_machine_env =
    "PATH\tpython3, nvcc and the toolkits it selects\n"
    "LD_LIBRARY_PATH\tthe loader's search, as ld.so reads it\n"
    "CUDA_HOME, CUDA_PATH\tthe toolkit they select\n"
    "CUDA_VISIBLE_DEVICES\twhich GPUs CUDA programs see\n"
    "VIRTUAL_ENV, CONDA_PREFIX, PYENV_ROOT\tthe Python environments inspected\n";
inline constexpr std::string_view k_display_env =
    "NO_COLOR\tany value turns colour off (no-color.org)\n"
    "TERM\tdumb turns colour off\n"
    "COLUMNS\tthe width text is wrapped at (else the terminal's, else 80; at most 100)\n"
    "LC_ALL, LC_CTYPE, LANG\ta character set other than UTF-8 gives ASCII symbols\n";
inline constexpr std::string_view k_exit_codes =
    "0\tnothing broken\n1\ta problem found (each command says which)\n2\ta usage error or unreadable input\n";

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
