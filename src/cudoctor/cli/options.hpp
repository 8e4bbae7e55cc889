#pragma once
// The options every command reads, as the command line gives them.
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace cudoctor::cli {

struct CommonOptions {
  std::string command_line;     // as it was given, each word quoted for the shell (main sets it)
  std::string format = "text";  // text | json | markdown | html; check also prometheus | npd | nfd
  bool json = false;            // --json: --format json
  std::string output;           // --output FILE: written there (atomically) instead of stdout
  bool verbose = false;
  std::string root = "/";
  bool no_runtime = false;
  bool runtime = false;  // --runtime: under --root, load the tree's vendor libraries too
  bool passive = false;  // --passive: NVML only, no CUDA context (a monitor beside running jobs)
  double timeout_s = 10.0;
  double compute_timeout_s = 30.0;  // --compute-timeout: L5 on every GPU at once
  bool redact = false;
  std::string color = "auto";        // auto | always | never
  std::string kb_dir;                // --kb DIR: knowledge-base files that replace the built-in ones
  std::vector<std::string> pythons;  // --python: interpreters to inspect as well
  std::string nfd_namespace = "cudoctor.feature.node.kubernetes.io";  // --nfd-namespace
  long nfd_expiry_s = 600;                                            // --nfd-expiry: the labels' lifetime, 0 for none
  bool deep = false;  // check --deep: run each environment's interpreter and ask its frameworks

  std::string effective_format() const { return json ? "json" : format; }
};

struct PlanOptions {
  std::string gpu;
  std::string cc;
  std::string driver;
  std::string framework;  // "torch" or "torch==2.5"
  bool all = false;
};

struct LddOptions {
  std::vector<std::string> files;
  std::string why;                             // explain one library
  std::optional<std::string> ld_library_path;  // --ld-library-path; else the environment's
};

struct ArchsOptions {
  std::vector<std::string> files;
  std::string cc;  // --cc X.Y: can each file run there
};

struct EnvOptions {
  std::string toolkit;         // version prefix or root path
  std::string shell = "bash";  // bash | zsh | fish
  std::string write;           // write a direnv/env file instead of printing
  bool unset = false;
};

struct KbOptions {
  std::string topic;               // "", gpu, driver, error, toolkit
  std::vector<std::string> words;  // the query as given: a pasted message need not be quoted
};

struct ExplainOptions {
  std::string file;      // "" or "-": standard input
  bool no_live = false;  // rank by the log alone, without this machine's check
};

struct DiffOptions {
  std::vector<std::string> files;  // the two reports
};

struct FleetOptions {
  std::vector<std::string> inputs;  // report files and directories of them
};

struct HelpOptions {
  std::string command;  // "" for the top level
  bool man = false;     // --man: the manual page (roff)
};

struct CompletionOptions {
  std::string shell;  // bash | zsh | fish
};

// Everything the command line gives: the common flags and each command's own.
struct Options {
  CommonOptions common;
  PlanOptions plan;
  LddOptions ldd;
  ArchsOptions archs;
  EnvOptions env;
  KbOptions kb;
  ExplainOptions explain;
  DiffOptions diff;
  FleetOptions fleet;
  HelpOptions help;
  CompletionOptions completion;
  const CLI::App* app = nullptr;  // the parser itself, for help and completion
};

// A validator that accepts exactly these values and says so in words ("'xml' is not one of
// text, json, markdown"); choices() is the matching type name, "{text,json,markdown}".
CLI::Validator one_of(std::vector<std::string> values);
std::string choices(const std::vector<std::string>& values);

// Adds the flags every command takes (--format, --root, --kb, …) to the top-level app.
void add_common_options(CLI::App& app, CommonOptions& o);
// Acts on the common flags once parsed: checks --root and loads the --kb directory in place of
// the built-in knowledge base. false (after a message) when they cannot be used: exit 2.
bool apply_common_options(const CLI::App& app, const CommonOptions& o);

// Whether to colour: --color, then NO_COLOR (any value), then whether stdout is a terminal.
bool use_color(const CommonOptions& o);
bool stdout_is_terminal();
// The columns to wrap prose at: COLUMNS when set, else the terminal's width (TIOCGWINSZ),
// else 80; never more than 100 or less than 40.
std::size_t output_width();
// Whether the locale's character set is UTF-8 (nl_langinfo(CODESET)); when not, text output
// is written with ASCII stand-ins for its symbols.
bool utf8_locale();

}  // namespace cudoctor::cli
