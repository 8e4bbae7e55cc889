#pragma once
// Help, the manual page and the shell completions, all written from the command table and
// the CLI11 parser main builds from it: what they list is what the parser accepts.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cudoctor/cli/commands.hpp"

namespace cudoctor::cli {

// One option or positional argument as the parser holds it.
struct OptionDoc {
  std::vector<std::string> names;   // "-v", "--verbose"; the positional's name alone
  std::string value;                // "" for a flag, else the type name: "SEC", "{text,json}"
  std::vector<std::string> values;  // the choices of a {a,b,c} type name
  std::string help;
  std::string group;  // a common option's group ("Output"); "" for a command's own
  bool positional = false;
  bool repeats = false;  // takes several values (files, --python)
  // What a shell offers for the value: "files", "dirs", "choices", "commands" or "" (nothing).
  std::string completes() const;
};

// A command with its own options, then the common ones that apply to it.
struct CommandDoc {
  const Command* command = nullptr;
  std::vector<OptionDoc> own;     // the command's own, positionals last
  std::vector<OptionDoc> common;  // the top-level options of its groups
};

// Every command of the parser root; the top level's options apart (common_options).
std::vector<CommandDoc> command_docs(const CLI::App& root);
std::vector<OptionDoc> common_options(const CLI::App& root);

// `cudoctor --help` (command null) or `cudoctor CMD --help`, wrapped to width.
std::string help_text(const CLI::App& root, const Command* command, std::size_t width);
// cudoctor(1) in roff (man(7) macros), dated with the knowledge base.
std::string man_page(const CLI::App& root, std::string_view date);
// Completion code for bash, zsh or fish; "" for another shell.
std::string completion_script(const CLI::App& root, std::string_view shell);

// Lines "A\tB" (examples, exit codes, environment) as (A, B); B is "" on a line without a
// tab, and empty lines are skipped. Views into lines.
std::vector<std::pair<std::string_view, std::string_view>> split_pairs(std::string_view lines);

// The candidate nearest to word by edit distance, when near enough to be a slip of the
// fingers (at most a third of its length, at least one edit); "" when none is.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace cudoctor::cli

namespace cudoctor::cli {

// "cudoctor 0.1.0 (commit 1a2b3c4d5e6f), knowledge base compiled 2026-11-29".
std::string version_line();
// The commands' names, in table order.
std::vector<std::string> command_names();

// What main prints for a command line the parser refused: the message in plain words, a
// guess for a misspelt command or option, and where the help is; exit 2.
struct Usage {
  std::string message;
};
// An argument nobody took: a misspelt command or option, or one too many. command is the
// subcommand named (null for none).
Usage unknown_argument(const CLI::App& root, const Command* command, const std::string& arg);
// CLI11's own messages, reworded (ArgumentMismatch and the like).
Usage parse_error(const Command* command, const std::string& what);

}  // namespace cudoctor::cli
