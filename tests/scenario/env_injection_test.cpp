// `cudoctor env` on toolkit directories and PATH values written to break out of quotes: the
// output is eval'ed and sourced in real bash, zsh and fish, and nothing in it may run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

// POSIX sh single quotes for the test's own command lines.
std::string sq(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

const std::string k_newline_env = "/opt/conda/envs/ml\ntouch INJECTED\n";
const std::string k_quote_env = "/opt/conda/envs/q'x$(touch X)`touch Y`\\";
const std::string k_hostile_path = "/usr/bin\\:; /usr/bin/touch F #:/bin";

// Two conda toolkits: CUDA 12.3 in an environment whose name holds newlines and a command,
// CUDA 12.4 in one whose name holds a quote, command substitutions and a trailing backslash.
void build(FixtureRoot& r) {
  add_debian_12(r);
  const auto conda = [&](const std::string& env, const std::string& version, const std::string& runtime) {
    r.file(env + "/conda-meta/cuda-toolkit-" + version + "-0.json", "{}\n");
    r.file(env + "/lib/libcudart.so." + runtime, "");
  };
  conda(k_newline_env, "12.3.2", "12.3.101");
  conda(k_quote_env, "12.4.1", "12.4.127");
  r.dir("/work");
}

// Nothing but what the test wrote may appear in the shell's directory or in the root.
void expect_nothing_ran(const FixtureRoot& r, const std::string& shell) {
  for (const char* f : {"INJECTED", "X", "Y", "F"}) {
    EXPECT_FALSE(fs::exists(r.host("/work/" + std::string(f)))) << shell << " ran 'touch " << f << "'";
    EXPECT_FALSE(fs::exists(r.path() / f)) << shell << " ran 'touch " << f << "'";
  }
}

const char* k_shells[] = {"bash", "zsh", "fish"};

TEST(ScenarioEnvInjection, ToolkitPathWithANewlineIsRefused) {
  FixtureRoot r;
  build(r);
  for (const std::string shell : k_shells) {
    const auto run = run_cudoctor({"--root", r.path().string(), "env", "12.3", "--shell", shell});
    EXPECT_EQ(run.exit_code, 2) << shell;
    EXPECT_EQ(run.out, "") << shell;
    EXPECT_TRUE(contains(run.err, "cudoctor env: the toolkit's path " + r.path().string() +
                                      "/opt/conda/envs/ml\\ntouch INJECTED\\n holds a control character"))
        << run.err;
    // What a user types: the eval of nothing runs nothing.
    const auto eval =
        shell == "fish"
            ? "eval (" + cudoctor_binary() + " --root " + r.path().string() + " env 12.3 --shell fish | string collect)"
            : "eval \"$(" + cudoctor_binary() + " --root " + r.path().string() + " env 12.3)\"";
    shell_output("cd " + sq(r.host("/work")) + " && /usr/bin/" + shell + " -c " + sq(eval) + " 2>/dev/null");
    expect_nothing_ran(r, shell);
  }
  const auto direnv = run_cudoctor({"--root", r.path().string(), "env", "12.3", "--write", r.host("/work/.envrc")});
  EXPECT_EQ(direnv.exit_code, 2);
  EXPECT_FALSE(fs::exists(r.host("/work/.envrc")));
}

TEST(ScenarioEnvInjection, QuotesBackslashesAndSubstitutionsStayData) {
  FixtureRoot r;
  build(r);
  const auto tk = r.path().string() + k_quote_env;
  for (const std::string shell : k_shells) {
    if (!fs::exists("/usr/bin/" + shell)) {
      ADD_FAILURE() << shell << " is not installed (scripts/install-deps.sh --test installs it)";
      continue;
    }
    const auto run = run_cudoctor({"--root", r.path().string(), "env", "12.4", "--shell", shell},
                                  {{"PATH", k_hostile_path}, {"LD_LIBRARY_PATH", "/opt/a'b\\:/opt/c"}});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out.find('\x1b'), std::string::npos);
    const auto work = r.host("/work");
    write(work / "env.out", run.out);
    // The shell starts with a harmless PATH; the output replaces it; printf is a builtin.
    const std::string script =
        shell == "fish"
            ? "source ./env.out; printf '%s' \"$PATH\" > path.txt; printf '%s' \"$CUDA_HOME\" > home.txt; "
              "printf '%s' \"$LD_LIBRARY_PATH\" > llp.txt\n"
            : "eval \"$(cat ./env.out)\"; printf '%s' \"$PATH\" > path.txt; printf '%s' \"$CUDA_HOME\" > home.txt; "
              "printf '%s' \"$LD_LIBRARY_PATH\" > llp.txt\n";
    write(work / "t.sh", script);
    const auto err = shell_output("cd " + sq(work) + " && env -i HOME=/nonexistent PATH=/usr/bin:/bin /usr/bin/" +
                                  shell + " ./t.sh 2>&1");
    EXPECT_EQ(err, "") << shell;
    EXPECT_EQ(slurp(work / "path.txt"), tk + "/bin:" + k_hostile_path) << shell << ":\n" << run.out;
    EXPECT_EQ(slurp(work / "home.txt"), tk) << shell << ":\n" << run.out;
    EXPECT_EQ(slurp(work / "llp.txt"), tk + "/lib:/opt/a'b\\:/opt/c") << shell << ":\n" << run.out;
    expect_nothing_ran(r, shell);
    for (const char* f : {"path.txt", "home.txt", "llp.txt"}) fs::remove(work / f);
  }
}

TEST(ScenarioEnvInjection, DirenvFileSourcedInBash) {
  FixtureRoot r;
  build(r);
  const auto tk = r.path().string() + k_quote_env;
  const auto work = r.host("/work");
  const auto run = run_cudoctor({"--root", r.path().string(), "env", "12.4", "--write", (work / ".envrc").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "cudoctor env: wrote " + (work / ".envrc").string() + "\n");
  write(work / "t.sh", ". ./.envrc; printf '%s' \"$PATH\" > path.txt; printf '%s' \"$CUDA_HOME\" > home.txt\n");
  const auto err = shell_output("cd " + sq(work) + " && env -i HOME=/nonexistent PATH=" + sq(k_hostile_path) +
                                " /usr/bin/bash ./t.sh 2>&1");
  EXPECT_EQ(err, "");
  EXPECT_EQ(slurp(work / "path.txt"), tk + "/bin:" + k_hostile_path) << slurp(work / ".envrc");
  EXPECT_EQ(slurp(work / "home.txt"), tk);
  expect_nothing_ran(r, "bash");
}

TEST(ScenarioEnvInjection, EveryLineIsACommentOrAnAssignment) {
  FixtureRoot r;
  build(r);
  // Switching to 12.4 names the other toolkit, the one with newlines, in the direnv filter.
  const auto run =
      run_cudoctor({"--root", r.path().string(), "env", "12.4", "--write", r.host("/work/.envrc").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto text = slurp(r.host("/work/.envrc"));
  EXPECT_TRUE(
      text.starts_with("# >>> cudoctor env >>> (managed by `cudoctor env --write`; edits inside are replaced)\n"
                       "# cudoctor env: CUDA 12.4.127 at " +
                       r.path().string() + k_quote_env + "\n"))
      << text;
  EXPECT_TRUE(text.ends_with("\nunset -f cudoctor_strip\n# <<< cudoctor env <<<\n")) << text;
  EXPECT_TRUE(contains(text, "$'" + r.path().string() + "/opt/conda/envs/ml\\x0atouch INJECTED\\x0a'|")) << text;
  for (const auto& line :
       {std::string("cudoctor_strip() {"), std::string("export PATH="), std::string("export LD_LIBRARY_PATH="),
        std::string("export CUDA_HOME="), std::string("unset -f cudoctor_strip")})
    EXPECT_TRUE(contains(text, "\n" + line)) << line;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8) << text;
}

TEST(ScenarioEnvInjection, WriteKeepsTheOtherLinesOfAnEnvrc) {
  FixtureRoot r;
  build(r);
  const auto envrc = r.host("/work/.envrc");
  write(envrc, "layout python\nexport WANDB_API_KEY=abc123\n");
  for (int i = 0; i < 2; ++i) {
    const auto run = run_cudoctor({"--root", r.path().string(), "env", "12.4", "--write", envrc.string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.err, "cudoctor env: updated its block in " + envrc.string() + "\n");
  }
  const auto text = slurp(envrc);
  EXPECT_TRUE(text.starts_with("layout python\nexport WANDB_API_KEY=abc123\n\n# >>> cudoctor env >>>")) << text;
  std::size_t blocks = 0;
  for (auto p = text.find("# >>> cudoctor env >>>"); p != std::string::npos; p = text.find("# >>> cudoctor env", p + 1))
    ++blocks;
  EXPECT_EQ(blocks, 1u) << "written twice, one block:\n" << text;
  write(envrc, "export A=1\n" + text + "export B=2\n");
  ASSERT_EQ(run_cudoctor({"--root", r.path().string(), "env", "--unset", "--write", envrc.string()}).exit_code, 0);
  const auto again = slurp(envrc);
  EXPECT_TRUE(again.starts_with("export A=1\nlayout python\n")) << again;
  EXPECT_TRUE(again.ends_with("# <<< cudoctor env <<<\nexport B=2\n")) << again;
  EXPECT_TRUE(contains(again, "# cudoctor env --unset: no CUDA toolkit on the paths")) << again;
  EXPECT_FALSE(contains(again, "# cudoctor env: CUDA 12.4.127 at ")) << "the block replaced, not added:\n" << again;
  const auto fish =
      run_cudoctor({"--root", r.path().string(), "env", "12.4", "--shell", "fish", "--write", envrc.string()});
  EXPECT_EQ(fish.exit_code, 2);
  EXPECT_TRUE(contains(fish.err, "--write writes bash for direnv; --shell fish does not apply")) << fish.err;
  r.fifo("/work/fifo");
  const auto to_fifo =
      run_cudoctor({"--root", r.path().string(), "env", "12.4", "--write", r.host("/work/fifo").string()});
  EXPECT_EQ(to_fifo.exit_code, 2);
  EXPECT_TRUE(contains(to_fifo.err, "it is a fifo, not a file")) << to_fifo.err;
}

// A PATH that already holds escape sequences, newlines and bytes that are not UTF-8: shown
// without a raw control byte, and each shell gets back exactly the same entries.
TEST(ScenarioEnvInjection, ControlBytesInPathAreEscapedAndKept) {
  FixtureRoot r;
  build(r);
  const auto tk = r.path().string() + k_quote_env;
  const std::string path = "/opt/\x1b]0;PWNED\x07red:/opt/new\nline:/opt/caf\xc3\xa9:/opt/bad\xff\x9b:/usr/bin";
  for (const std::string shell : k_shells) {
    const auto run = run_cudoctor({"--root", r.path().string(), "env", "12.4", "--shell", shell}, {{"PATH", path}});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    for (const char c : run.out)
      EXPECT_FALSE((c >= 0 && c < 0x20 && c != '\n') || c == 0x7f) << shell << ": " << run.out;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 4) << run.out;
    const auto work = r.host("/work");
    write(work / "env.out", run.out);
    write(work / "t.sh", shell == "fish" ? "source ./env.out; printf '%s' \"$PATH\" > path.txt\n"
                                         : "eval \"$(cat ./env.out)\"; printf '%s' \"$PATH\" > path.txt\n");
    EXPECT_EQ(shell_output("cd " + sq(work) + " && env -i HOME=/nonexistent PATH=/usr/bin:/bin /usr/bin/" + shell +
                           " ./t.sh 2>&1"),
              "");
    EXPECT_EQ(slurp(work / "path.txt"), tk + "/bin:" + path) << shell << ":\n" << run.out;
    fs::remove(work / "path.txt");
  }
}

TEST(ScenarioEnvInjection, WriteErrorsAreErrors) {
  FixtureRoot r;
  build(r);
  for (const char* target : {"/dev/full", "/nonexistent-dir/.envrc"}) {
    const auto run = run_cudoctor({"--root", r.path().string(), "env", "12.4", "--write", target});
    EXPECT_EQ(run.exit_code, 2) << target;
    EXPECT_TRUE(contains(run.err, std::string("cudoctor env: cannot write ") + target + ": ")) << run.err;
    EXPECT_FALSE(contains(run.err, "wrote")) << run.err;
  }
  EXPECT_TRUE(contains(run_cudoctor({"--root", r.path().string(), "env", "12.4", "--write", "/dev/full"}).err,
                       "No space left on device"));
}

TEST(ScenarioEnvInjection, RedactIsRefused) {
  FixtureRoot r;
  build(r);
  const auto run = run_cudoctor({"--root", r.path().string(), "--redact", "env", "12.4"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_TRUE(contains(run.err, "cudoctor env: --redact does not apply")) << run.err;
}

}  // namespace
}  // namespace cudoctor::testing
