#include "cudoctor/cli/commands.hpp"

namespace cudoctor::cli {

// Defined in cli/<name>_command.cpp; declared here beside their rows, so that adding a command
// is a row, its declarations and its file.
int run_check(const Options& o);
void add_plan_options(CLI::App& app, Options& o);
int run_plan(const Options& o);
void add_ldd_options(CLI::App& app, Options& o);
int run_ldd(const Options& o);
void add_archs_options(CLI::App& app, Options& o);
int run_archs(const Options& o);
int run_toolkits(const Options& o);
void add_env_options(CLI::App& app, Options& o);
int run_env(const Options& o);
void add_kb_options(CLI::App& app, Options& o);
int run_kb(const Options& o);
void add_explain_options(CLI::App& app, Options& o);
int run_explain(const Options& o);
int run_tune(const Options& o);

namespace {

const Command k_commands[] = {
    {"check", "Check the whole chain (the default)", nullptr, run_check},
    {"plan", "Which toolkits and framework builds work with this GPU and driver", add_plan_options, run_plan},
    {"ldd", "Which shared libraries each file loads, and why each one (ld.so-exact)", add_ldd_options, run_ldd},
    {"archs", "The SM (cubin) and PTX architectures in the files' CUDA fatbins", add_archs_options, run_archs},
    {"toolkits", "Every CUDA toolkit here, and what selects one", nullptr, run_toolkits},
    {"env", "Shell lines that switch to one toolkit: eval \"$(cudoctor env 12.4)\"", add_env_options, run_env},
    {"explain", "From a pasted error log to the broken link, the evidence and the fix", add_explain_options,
     run_explain},
    {"tune", "Settings that cost speed or are not what they look like, and where each is set", nullptr, run_tune},
    {"kb", "What the knowledge base holds, or one answer from it", add_kb_options, run_kb},
};

}  // namespace

std::span<const Command> commands() {
  return k_commands;
}

}  // namespace cudoctor::cli
