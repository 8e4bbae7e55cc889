// The command line as a newcomer meets it: guesses for slips, errors in plain words, help that
// lists what applies, the version, and the completions asked of bash, zsh and fish themselves.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "cudoctor/util/strings.hpp"
#include "machines.hpp"
#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

void expect_usage(const std::vector<std::string>& args, const std::string& err) {
  const auto r = run_cudoctor(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, err)) << "expected: " << err << "\ngot: " << r.err;
  for (const char* cli11 : {"was not expected", "At Most", "is required", "not in {", "Run with --help"})
    EXPECT_FALSE(contains(r.err, cli11)) << "parser-speak: " << r.err;
}

TEST(ScenarioCli, MisspeltCommandsAndOptionsGetAGuess) {
  expect_usage({"chek"}, "cudoctor: unknown command 'chek'. Did you mean 'check'?\n");
  expect_usage({"tolkits"}, "unknown command 'tolkits'. Did you mean 'toolkits'?");
  expect_usage({"xyzzy"}, "cudoctor: unknown command 'xyzzy'; cudoctor --help lists the commands and options");
  expect_usage({"--jsn"}, "cudoctor: unknown option '--jsn'. Did you mean '--json'?");
  expect_usage({"plan", "--gpuu", "RTX 4090"}, "cudoctor plan: unknown option '--gpuu'. Did you mean '--gpu'?");
  expect_usage({"ldd", "--wy", "libc.so.6", "/bin/true"}, "cudoctor ldd: unknown option '--wy'. Did you mean '--why'?");
  expect_usage({"help", "chek"}, "cudoctor help: no command 'chek'. Did you mean 'check'?");
}

TEST(ScenarioCli, UsageErrorsInPlainWords) {
  expect_usage({"--timeout", "abc"}, "--timeout: 'abc' is not a number of seconds (0.1 to 3600)");
  expect_usage({"--format", "xml"}, "--format: 'xml' is not one of text, json, markdown");
  expect_usage({"env", "12.4", "--shell", "tcsh"}, "--shell: 'tcsh' is not one of bash, zsh, fish");
  expect_usage({"ldd"}, "cudoctor ldd: give one or more ELF files, e.g. cudoctor ldd $(which python3)");
  expect_usage({"archs"}, "cudoctor archs: give one or more ELF files");
  expect_usage({"--no-runtime", "--python", "/nonexistent/python"}, "--python /nonexistent/python: no such file");
  expect_usage({"plan", "--framework", "torch", "--framework", "jax"}, "--framework: give it once");
  expect_usage({"toolkits", "extra"}, "cudoctor toolkits: unexpected argument 'extra'");
  expect_usage({"completion"}, "cudoctor completion: name the shell: bash, zsh or fish");
}

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (const char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

TEST(ScenarioCli, EachCommandsHelpListsTheOptionsThatApply) {
  const auto check = run_cudoctor({"check", "--help"});
  EXPECT_EQ(check.exit_code, 0);
  for (const char* opt : {"--json", "-v, --verbose", "--format {text,json,markdown,html,prometheus,npd,nfd}",
                          "--root DIR", "--no-runtime", "--passive", "--nfd-namespace NS", "--nfd-expiry SEC",
                          "--python PATH", "--redact", "--deep", "--timeout SEC", "Examples:", "Exit codes:",
                          "Environment:", "NO_COLOR", "CUDA_VISIBLE_DEVICES", "man cudoctor"})
    EXPECT_TRUE(contains(check.out, opt)) << opt << " in\n" << check.out;
  EXPECT_FALSE(contains(check.out, "TEXT:{")) << "CLI11's type tags";
  const auto plan = run_cudoctor({"plan", "--help"});
  for (const char* opt : {"--json", "--gpu NAME", "--driver VERSION", "--framework", "--all", "--python"})
    EXPECT_TRUE(contains(plan.out, opt)) << opt << " in\n" << plan.out;
  EXPECT_FALSE(contains(plan.out, "--deep")) << "--deep belongs to check";
  EXPECT_TRUE(contains(run_cudoctor({"toolkits", "--help"}).out, "--json"));
  const auto ldd = run_cudoctor({"ldd", "--help"});
  for (const char* opt :
       {"Usage: cudoctor ldd [OPTIONS] [FILE...]", "--why LIB", "--ld-library-path DIRS", "--json", "LD_LIBRARY_PATH"})
    EXPECT_TRUE(contains(ldd.out, opt)) << opt << " in\n" << ldd.out;
  for (const char* opt : {"--no-runtime", "--deep", "--compute-timeout"})
    EXPECT_FALSE(contains(ldd.out, opt)) << opt << ": not read by ldd";
  EXPECT_EQ(run_cudoctor({"help", "ldd"}).out, ldd.out);
  const auto top = run_cudoctor({"--help"});
  for (const char* cmd :
       {"check", "plan", "ldd", "archs", "toolkits", "env", "explain", "tune", "kb", "help", "version", "completion"})
    EXPECT_TRUE(contains(top.out, std::string("\n  ") + cmd + " ")) << cmd;
  EXPECT_EQ(run_cudoctor({"help"}).out, top.out);
  // Piped, help is wrapped at 80 columns.
  for (const auto& out : {top.out, check.out, plan.out, ldd.out})
    for (const auto line : util::lines(out)) EXPECT_LE(columns(std::string(line)), 80u) << line;
}

TEST(ScenarioCli, VersionNamesTheCommitAndTheKnowledgeBase) {
  const auto v = run_cudoctor({"version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(run_cudoctor({"--version"}).out, v.out);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(v.out, m,
                               std::regex("cudoctor [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]{12}(-dirty)?|unknown)"
                                          "\\), knowledge base compiled [0-9]{4}-[0-9]{2}-[0-9]{2}\n")))
      << v.out;
  const auto head =
      shell_output("git -C '" + std::string(CUDOCTOR_DATA_DIR) + "' rev-parse --short=12 HEAD 2>/dev/null");
  if (!head.empty()) {
    EXPECT_EQ(m[1].str().substr(0, 12), head.substr(0, 12)) << "the commit it was built from";
  }
}

// The completion code for a shell, in a file.
std::string completion_file(const FixtureRoot& r, const std::string& shell) {
  const auto code = run_cudoctor({"completion", shell});
  EXPECT_EQ(code.exit_code, 0) << code.err;
  const auto path = r.host("/completion." + shell).string();
  std::ofstream(path) << code.out;
  return path;
}

// What bash offers for the words typed so far (the last one being completed).
std::string bash_offers(const std::string& script, const std::string& words) {
  return shell_output("bash --norc -c 'source " + script + "; COMP_WORDS=(" + words +
                      "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cudoctor; echo \"${COMPREPLY[*]}\"'");
}

TEST(ScenarioCli, BashCompletesCommandsOptionsAndValues) {
  FixtureRoot r;
  const auto f = completion_file(r, "bash");
  EXPECT_EQ(bash_offers(f, "cudoctor pl"), "plan\n");
  EXPECT_EQ(bash_offers(f, "cudoctor t"), "toolkits tune\n");
  EXPECT_EQ(bash_offers(f, "cudoctor --format \"\""), "text json markdown html prometheus npd nfd\n");
  EXPECT_EQ(bash_offers(f, "cudoctor -v --color n"), "never\n");
  EXPECT_EQ(bash_offers(f, "cudoctor kb d"), "driver\n");
  EXPECT_EQ(bash_offers(f, "cudoctor plan --dr"), "--driver\n");
  EXPECT_EQ(bash_offers(f, "cudoctor ldd --w"), "--why\n");
  EXPECT_EQ(bash_offers(f, "cudoctor ldd --n"), "\n") << "--no-runtime is not ldd's";
  EXPECT_EQ(bash_offers(f, "cudoctor completion z"), "zsh\n");
  EXPECT_EQ(bash_offers(f, "cudoctor help ar"), "archs\n");
  EXPECT_EQ(bash_offers(f, "cudoctor --root /x plan --gpu RTX --all --js"), "--json\n");
  r.file("/bin/app", "");
  EXPECT_EQ(bash_offers(f, "cudoctor ldd " + r.host("/bin/a").string()), r.host("/bin/app").string() + "\n");
}

TEST(ScenarioCli, FishCompletesCommandsOptionsAndValues) {
  if (!fs::exists("/usr/bin/fish")) GTEST_SKIP() << "no fish";
  FixtureRoot r;
  const auto f = completion_file(r, "fish");
  const auto ask = [&](const std::string& line) {
    return shell_output("fish --no-config -c 'source " + f + "; complete -C \"" + line + "\"' | cut -f1");
  };
  EXPECT_EQ(ask("cudoctor pl"), "plan\n");
  EXPECT_EQ(ask("cudoctor --format "), "html\njson\nmarkdown\nnfd\nnpd\nprometheus\ntext\n");
  EXPECT_EQ(ask("cudoctor plan --dr"), "--driver\n");
  EXPECT_EQ(ask("cudoctor kb "), "driver\nerror\ngpu\ntoolkit\n");
  EXPECT_FALSE(contains(ask("cudoctor ldd --"), "--deep"));
}

TEST(ScenarioCli, ZshCompletesInARealInteractiveShell) {
  if (!fs::exists("/usr/bin/zsh")) GTEST_SKIP() << "no zsh";
  FixtureRoot r;
  const auto f = completion_file(r, "zsh");
  // An interactive zsh on a pseudo-terminal (zsh/zpty) with compinit, typing "cudoctor pl<TAB>".
  r.file("/drive.zsh",
         "zmodload zsh/zpty\nzpty z 'zsh -f -i'\n"
         "zpty -w z 'PS1=\"> \"; autoload -Uz compinit; compinit -u -D; source " +
             f +
             "'\n"
             "zpty -w -n z $'cudoctor pl\\t'\n"
             // Read until the completed line shows, up to 20 s: a loaded machine is slow to compinit.
             "local all='' line; integer i=0\n"
             "while (( i++ < 200 )); do\n"
             "  while zpty -r -t z line; do all+=$line; done\n"
             "  [[ $all == *'cudoctor plan'* ]] && break; sleep 0.1\n"
             "done\nprint -r -- \"$all\"\nzpty -d z\n");
  const auto out = shell_output("timeout 30 zsh -f '" + r.host("/drive.zsh").string() + "'");
  EXPECT_TRUE(contains(out, "cudoctor plan")) << out;
}

TEST(ScenarioCli, ManPageRendersWithoutWarningsAndDescribesEveryCommand) {
  if (!fs::exists("/usr/bin/man")) GTEST_SKIP() << "no man (man-db)";
  FixtureRoot r;
  const auto page = run_cudoctor({"help", "--man"});
  ASSERT_EQ(page.exit_code, 0);
  const auto path = r.host("/cudoctor.1").string();
  std::ofstream(path) << page.out;
  EXPECT_EQ(shell_output("man --warnings -l '" + path + "' 2>&1 >/dev/null"), "") << "groff's warnings";
  // Justified lines spread words apart: one space between words, as a reader sees them.
  const auto text = shell_output("MANWIDTH=80 man -l '" + path + "' 2>/dev/null | col -bx | tr -s ' '");
  for (const char* s : {"cudoctor - find where", "COMMANDS", "cudoctor plan", "cudoctor ldd [FILE...]",
                        "cudoctor explain", "cudoctor completion [{bash,zsh,fish}]", "--deep", "--why LIB", "--no-live",
                        "--man", "EXIT STATUS", "ENVIRONMENT", "NO_COLOR", "SEE ALSO"})
    EXPECT_TRUE(contains(text, s)) << s << " in\n" << text;
}

// A VM without a GPU, whose report has prose to wrap.
void vm(FixtureRoot& r) {
  add_kvm_guest_without_gpu(r, "vm-1");
}

TEST(ScenarioCli, ReportWrapsAtTheWidthItIsGiven) {
  FixtureRoot r;
  vm(r);
  const std::vector<std::string> args{"--root", r.path().string(), "--no-runtime", "-v"};
  const auto widest = [](const std::string& out, std::size_t limit) {
    std::size_t w = 0;
    // The header names the --root directory, as long as the test's temporary directory is.
    const auto body = out.substr(out.find('\n') + 1);
    for (const auto line : util::lines(body)) {
      const std::string l(line);
      // A line over the limit may only be one token that cannot be broken (a long path).
      const auto text = l.substr(std::min(l.find_first_not_of(" ·$"), l.size()));
      if (columns(l) > limit) {
        EXPECT_EQ(text.find(' '), std::string::npos) << "wraps at " << limit << ": " << l;
      }
      w = std::max(w, columns(l));
    }
    return w;
  };
  EXPECT_LE(widest(run_cudoctor(args).out, 80), 80u) << "piped: 80";
  widest(run_cudoctor(args, {{"COLUMNS", "60"}}).out, 60);
  EXPECT_GT(widest(run_cudoctor(args, {{"COLUMNS", "200"}}).out, 100), 80u) << "wider when the terminal is";
}

TEST(ScenarioCli, ATmuxWindowOfSixtyColumnsNeedsNoSoftWrap) {
  if (!fs::exists("/usr/bin/tmux")) GTEST_SKIP() << "no tmux";
  FixtureRoot r;
  vm(r);
  const auto sock = "cudoctor-test-" + std::to_string(::getpid());
  const auto tmux = "tmux -L " + sock + " -f /dev/null ";
  // The pane is the terminal: cudoctor asks it for its width (TIOCGWINSZ).
  shell_output(tmux + "new-session -d -x 60 -y 120 'env -u COLUMNS LANG=C.UTF-8 TERM=xterm NO_COLOR=1 " +
               cudoctor_binary() + " --root " + r.path().string() + " --no-runtime; sleep 60'");
  std::string pane;
  for (int i = 0; i < 100 && !contains(pane, "Broken at"); ++i) {
    shell_output("sleep 0.1");
    pane = shell_output(tmux + "capture-pane -p -t 0");
  }
  const auto joined = shell_output(tmux + "capture-pane -p -J -t 0");
  shell_output(tmux + "kill-server");
  ASSERT_TRUE(contains(pane, "Broken at L1 driver")) << pane;
  // From L0 on (the header names the --root directory, as long as the test's temporary one).
  const auto body = [](const std::string& s) { return s.substr(std::min(s.find("\nL0 host\n"), s.size())); };
  EXPECT_EQ(body(pane), body(joined)) << "a line the terminal had to wrap itself";
  EXPECT_TRUE(contains(pane, "\n      This is a virtual machine (kvm): a GPU appears in a VM\n")) << pane;
}

TEST(ScenarioCli, AsciiSymbolsWhereTheLocaleIsNotUtf8) {
  FixtureRoot r;
  vm(r);
  const std::vector<std::string> args{"--root", r.path().string(), "--no-runtime"};
  const auto utf8 = run_cudoctor(args);
  EXPECT_TRUE(contains(utf8.out, "  ✗ No NVIDIA GPU on the PCI bus")) << utf8.out;
  const auto c = run_cudoctor(args, {{"LANG", "C"}});
  EXPECT_EQ(c.exit_code, 1);
  for (const char ch : c.out) EXPECT_LT(static_cast<unsigned char>(ch), 0x80u) << c.out;
  EXPECT_TRUE(contains(c.out, "  x No NVIDIA GPU on the PCI bus")) << c.out;
  EXPECT_TRUE(contains(c.out, "L1 driver  <- break point")) << c.out;
  EXPECT_TRUE(contains(c.out, "\n  + Debian GNU/Linux 12")) << c.out;
  EXPECT_EQ(run_cudoctor({"--root", r.path().string(), "--no-runtime", "--json"}, {{"LANG", "C"}}).out,
            run_cudoctor({"--root", r.path().string(), "--no-runtime", "--json"}).out)
      << "JSON is the same whatever the locale";
}

TEST(ScenarioCli, TheReportEndsWithASummaryAndSaysWhatItSkippedAndInspected) {
  FixtureRoot r;
  vm(r);
  build_venv(r, "12.4");
  const auto out = run_cudoctor({"--root", r.path().string(), "--no-runtime"}, k_activated_venv).out;
  EXPECT_TRUE(contains(out, "\n1 problem (1 error):\n  ✗ L1 No NVIDIA GPU on the PCI bus\n")) << out;
  EXPECT_TRUE(contains(out, "L5 application skipped (--no-runtime).")) << out;
  EXPECT_FALSE(contains(out, "Not inspected by this version")) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  · [0-9]+ Python environments? inspected \\(-v lists them\\)\n")))
      << out;
  const auto verbose = run_cudoctor({"--root", r.path().string(), "--no-runtime", "-v"}, k_activated_venv).out;
  EXPECT_TRUE(contains(verbose, "· /home/u/venv (venv): torch 2.5.1+cu124")) << verbose;
}

TEST(ScenarioCli, MarkdownSuggestsRedactAndHoldsEachFactOnce) {
  FixtureRoot r;
  vm(r);
  build_venv(r, "12.4");
  const std::vector<std::string> args{"--root", r.path().string(), "--no-runtime", "--format", "markdown"};
  const auto md = run_cudoctor(args, k_activated_venv).out;
  EXPECT_TRUE(contains(md, "`cudoctor --format markdown --redact` replaces the host name")) << md;
  auto redacted_args = args;
  redacted_args.push_back("--redact");
  EXPECT_FALSE(contains(run_cudoctor(redacted_args, k_activated_venv).out, "--redact` replaces")) << "already done";
  const auto b = md.find("```json\n");
  ASSERT_NE(b, std::string::npos) << md;
  const auto facts = nlohmann::json::parse(md.substr(b + 8, md.find("```", b + 8) - b - 8));
  EXPECT_TRUE(facts["pythons"].is_array() && !facts["pythons"].empty()) << "the contract's top-level lists stay";
  EXPECT_TRUE(facts["toolkits"].is_array());
  EXPECT_FALSE(facts["python"].contains("envs")) << "python.envs is pythons: not twice";
  EXPECT_FALSE(facts["toolkit"].contains("toolkits")) << "toolkit.toolkits is toolkits: not twice";
  EXPECT_LT(md.size(), 65536u) << "a GitHub issue's limit";
}

}  // namespace
}  // namespace cudoctor::testing
