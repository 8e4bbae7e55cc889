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
void add_diff_options(CLI::App& app, Options& o);
int run_diff(const Options& o);
void add_fleet_options(CLI::App& app, Options& o);
int run_fleet(const Options& o);
void add_help_options(CLI::App& app, Options& o);
int run_help(const Options& o);
int run_version(const Options& o);
void add_completion_options(CLI::App& app, Options& o);
int run_completion(const Options& o);

namespace {

constexpr std::string_view k_all = "Output Machine Probe";
const Command k_commands[] = {
    {"check", "Check the whole chain (the default)", nullptr, run_check, "Output Machine Probe Check",
     "cudoctor\tcheck this machine, bottom-up, and name the lowest broken link\n"
     "cudoctor -v\tthe evidence behind every line\n"
     "cudoctor --json > report.json\tevery fact, for a script\n"
     "cudoctor --format markdown --redact\ta report to paste into an issue\n"
     "cudoctor check --deep\talso import each GPU framework in its own interpreter",
     "0\tthe chain works (warnings may remain)\n1\ta link is broken\n2\ta usage error or an unreadable --root",
     k_machine_env},
    {"plan", "Which toolkits and framework builds work with this GPU and driver", add_plan_options, run_plan, k_all,
     "cudoctor plan\tfor this machine's GPU and driver\n"
     "cudoctor plan --gpu \"RTX 4060 Laptop GPU\" --driver 535.104.05\tfor another machine\n"
     "cudoctor plan --framework torch==2.5\tonly that framework's builds\n"
     "cudoctor plan --cc 8.9 --all --json\tevery build, for a script",
     "0\tsomething runs here\n1\tnothing selected runs here\n2\ta usage error, or no GPU or driver to plan for",
     k_machine_env},
    {"ldd", "Which shared libraries each file loads, and why each one (ld.so-exact)", add_ldd_options, run_ldd,
     "Output Machine",
     "cudoctor ldd $(which python3)\tthe tree, each library with the rule that found it\n"
     "cudoctor ldd /usr/local/cuda/lib64/libcublas.so --why libcuda.so.1\tevery place looked in for one library\n"
     "cudoctor ldd app --ld-library-path /opt/cuda/lib64\tas with another LD_LIBRARY_PATH",
     "0\tevery library and symbol version found\n1\ta library or symbol version is missing\n2\ta file cannot be "
     "read, or a usage error",
     "LD_LIBRARY_PATH\tsearched as ld.so searches it (unless --ld-library-path)\n"},
    {"archs", "The SM (cubin) and PTX architectures in the files' CUDA fatbins", add_archs_options, run_archs,
     "Output Machine",
     "cudoctor archs libtorch_cuda.so\tits cubins and PTX\n"
     "cudoctor archs app --cc 8.9\twhether the app's kernels run on compute capability 8.9",
     "0\tlisted (and, with --cc, runs there)\n1\tdoes not run on --cc\n2\ta file cannot be read, or a usage error", ""},
    {"toolkits", "Every CUDA toolkit here, and what selects one", nullptr, run_toolkits, "Output Machine",
     "cudoctor toolkits\tthe toolkits and what selects one\ncudoctor toolkits --json\tthe same as data",
     "0\tlisted\n2\tan unreadable --root", k_machine_env},
    {"env", "Shell lines that switch to one toolkit: eval \"$(cudoctor env 12.4)\"", add_env_options, run_env,
     "Machine",
     "eval \"$(cudoctor env 12.4)\"\tthis shell uses CUDA 12.4 from now on\n"
     "cudoctor env 11.8 --shell fish | source\tthe same in fish\n"
     "cudoctor env 12.4 --write .envrc\ta managed block in direnv's .envrc (other lines kept)\n"
     "eval \"$(cudoctor env --unset)\"\tno toolkit on the paths",
     "0\tprinted or written\n2\tno toolkit matches, the file cannot be written, or a usage error",
     "PATH, LD_LIBRARY_PATH\tthe entries kept (every other toolkit's are taken off)\n"},
    {"explain", "From a pasted error log to the broken link, the evidence and the fix", add_explain_options,
     run_explain, k_all,
     "cudoctor explain train.log\tthe causes, ranked, with this machine's own check\n"
     "python train.py 2>&1 | cudoctor explain -\tstraight from a failing run\n"
     "cudoctor explain job.err --no-live\tby the log alone (another machine's log)",
     "0\tnothing in the log points at a broken link\n1\ta cause was found\n2\tthe log cannot be read, or a usage "
     "error",
     k_machine_env},
    {"tune", "Settings that cost speed or are not what they look like, and where each is set", nullptr, run_tune, k_all,
     "cudoctor tune\tevery setting, its verdict and the file:line that sets it\n"
     "cudoctor tune --json\tthe same as data",
     "0\tnothing to change\n1\ta setting to change\n2\ta usage error", k_machine_env},
    {"diff", "What differs between two machines' reports, what explains a failure first", add_diff_options, run_diff,
     "Output",
     "cudoctor diff good.json bad.json\tthe problems one side has, and the differences behind them first\n"
     "cudoctor diff a.json b.json --format markdown\tthe same as tables, for an issue",
     "0\tnothing that matters differs\n1\ta problem or a fact differs\n2\ta report cannot be read, or a usage "
     "error",
     ""},
    {"fleet", "Many machines' reports at once: the broken nodes and why, configurations, outliers", add_fleet_options,
     run_fleet, "Output",
     "srun -N64 sh -c 'cudoctor --json > reports/$(hostname).json'\tone report per node of an allocation\n"
     "cudoctor fleet reports/\tthe broken nodes, the configurations and what sets each apart\n"
     "cudoctor fleet reports/ --json\tthe same as data",
     "0\tevery node healthy\n1\ta node broken or a file skipped\n2\tno report could be read, or a usage error", ""},
    {"kb", "What the knowledge base holds, or one answer from it", add_kb_options, run_kb, "Output Machine",
     "cudoctor kb\twhat it holds and how old it is\n"
     "cudoctor kb gpu RTX 4090\ta GPU's compute capability and the drivers and toolkits for it\n"
     "cudoctor kb driver 535.104.05\tthe newest CUDA it runs\n"
     "cudoctor kb error CUDA driver version is insufficient\twhat an error means",
     "0\tanswered\n1\tnothing matches\n2\ta usage error", ""},
    {"help", "Help for cudoctor or one command; --man prints the manual page", add_help_options, run_help, "",
     "cudoctor help plan\tplan's options, examples and exit codes\n"
     "cudoctor help --man | man -l -\tthe manual page from this binary",
     "0\tprinted\n2\tno such command", ""},
    {"version", "The version, the commit and the knowledge base's date", nullptr, run_version, "",
     "cudoctor version\tcudoctor 0.1.0 (commit …), knowledge base of …", "0\tprinted", ""},
    {"completion", "Shell completion code for bash, zsh or fish", add_completion_options, run_completion, "",
     "source <(cudoctor completion bash)\tcomplete cudoctor in this bash\n"
     "cudoctor completion fish > ~/.config/fish/completions/cudoctor.fish\tfor every fish session",
     "0\tprinted\n2\tan unknown shell", ""},
};

}  // namespace

std::span<const Command> commands() {
  return k_commands;
}

const Command* find_command(std::string_view name) {
  for (const auto& c : k_commands)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace cudoctor::cli
