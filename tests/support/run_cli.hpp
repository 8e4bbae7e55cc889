#pragma once
// Runs the cudoctor binary hermetically: a fixed environment (no LD_LIBRARY_PATH, CUDA_*,
// PYTHON*, NO_COLOR, TERM from the caller), stdout and stderr captured.
#include <map>
#include <string>
#include <vector>

namespace cudoctor::testing {

struct CliResult {
  int exit_code = -1;  // -1 when it did not exit normally
  int signal = 0;
  std::string out;
  std::string err;
};

// args after the program name; env adds to the fixed environment; prefix goes before the
// program (e.g. setpriv to run as another user).
CliResult run_cudoctor(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                       const std::vector<std::string>& prefix = {});

std::string cudoctor_binary();

// Fails the current test when a fix command in cudoctor's output (text "$ …" and "check: $ …"
// lines, or a JSON report's fix.commands and fix.checks) does not pass `bash -n`. Every
// run_cudoctor call applies it, so the whole scenario suite enforces it.
void expect_fix_commands_parse(const std::string& output);
// Whether bash parses a command line (bash -n: read, never run).
bool bash_parses(const std::string& command);

// Runs a shell command line (sh -c) and returns its standard output.
std::string shell_output(const std::string& command);

}  // namespace cudoctor::testing
