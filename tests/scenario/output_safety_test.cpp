// Output that cannot be written is an error, no byte from the machine reaches the terminal raw,
// and what ldd counts is what it lists.
#include <gtest/gtest.h>

#include <filesystem>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

std::string q(const std::string& s) {
  return "'" + s + "'";
}

TEST(ScenarioOutput, FullDiskExitsTwoWithTheReason) {
  FixtureRoot r;
  add_kvm_guest_without_gpu(r);
  r.copy("/bin/tool", "/bin/true");
  const auto bin = q(cudoctor_binary()) + " --root " + q(r.path().string()) + " ";
  for (const std::string args : {"--no-runtime", "--no-runtime --json", "--format markdown", "toolkits",
                                 "toolkits --json", "ldd /bin/tool", "ldd --json /bin/tool", "archs /bin/tool", "kb",
                                 "plan --gpu 'RTX 4090'", "plan --json --cc 8.9", "env --unset"}) {
    const auto out = shell_output(bin + args + " 2>&1 > /dev/full; echo rc=$?");
    EXPECT_EQ(out, "cudoctor: cannot write the report: No space left on device\nrc=2\n") << args;
  }
}

TEST(ScenarioOutput, UserInputInMessagesIsEscaped) {
  const auto plan = run_cudoctor({"plan", "--gpu", "\x1b[31mRTX\n"});
  EXPECT_EQ(plan.exit_code, 2);
  EXPECT_TRUE(contains(plan.err, "no GPU in the knowledge base matches '\\x1b[31mRTX\\n'")) << plan.err;
  const auto kb = run_cudoctor({"kb", "driver", "\x1b]0;x\x07"});
  EXPECT_EQ(kb.err, "cudoctor kb driver: '\\x1b]0;x\\x07' is not a version\n");
  const auto archs = run_cudoctor({"archs", "--cc",
                                   "\x9b"
                                   "1m",
                                   "/bin/true"});
  EXPECT_EQ(archs.err, "cudoctor archs: --cc \\x9b1m: not a compute capability (like 8.9)\n");
  const auto ldd = run_cudoctor({"ldd", "/nonexistent/\x1b[2J"});
  EXPECT_EQ(ldd.exit_code, 2);
  EXPECT_EQ(ldd.err.find('\x1b'), std::string::npos) << ldd.err;
  EXPECT_TRUE(contains(ldd.err, "/nonexistent/\\x1b[2J")) << ldd.err;
  const auto env = run_cudoctor({"env", "\x1b[31m12"});
  EXPECT_TRUE(contains(env.err, "no toolkit matches '\\x1b[31m12'")) << env.err;
}

TEST(ScenarioOutput, TreeStringsReachTheTerminalEscaped) {
  FixtureRoot r;
  add_kvm_guest_without_gpu(r, "box\x1b]0;PWNED\x07");
  r.file("/etc/os-release", "PRETTY_NAME=\"\x1b]0;PWNED\x07\x1b[2J\x1b[31mEvil\xff\"\nID=debian\nVERSION_ID=\"12\"\n");
  r.file("/opt/conda/envs/x\x1b[31m\n✓ fine/conda-meta/cuda-toolkit-12.4.1-0.json", "{}\n");
  r.file("/opt/conda/envs/x\x1b[31m\n✓ fine/lib/libcudart.so.12.4.127", "");
  for (const auto& args : {std::vector<std::string>{"-v", "--no-runtime"},
                           {"--format", "markdown", "-v", "--no-runtime"},
                           {"toolkits"},
                           {"--color", "always", "-v", "--no-runtime"}}) {
    std::vector<std::string> full = {"--root", r.path().string()};
    full.insert(full.end(), args.begin(), args.end());
    const auto run = run_cudoctor(full);
    const auto& out = run.out;
    EXPECT_FALSE(contains(out, "\x1b]") || contains(out, "\x1b[2J") || contains(out, "\x1b[31mEvil")) << args[0];
    EXPECT_FALSE(contains(out, "\xff")) << "not valid UTF-8: " << args[0];
    EXPECT_FALSE(contains(out, "\n✓ fine")) << "a fake line: " << args[0];
    EXPECT_TRUE(contains(out, "x\\x1b[31m\\n✓ fine")) << args[0] << ":\n" << out;
  }
  const auto text = run_cudoctor({"--root", r.path().string(), "--no-runtime", "-v"}).out;
  EXPECT_TRUE(contains(text, "box\\x1b]0;PWNED\\x07")) << text;
}

// A program whose PT_INTERP names a loader that is not there, and whose DT_NEEDED name holds
// an escape sequence and a newline.
TEST(ScenarioOutput, LddCountsTheMissingInterpreterItLists) {
  FixtureRoot r;
  const auto dir = r.path().string();
  r.file("/src/lib.c", "int f(void) { return 0; }\n");
  r.file("/src/main.c", "int f(void);\nint main(void) { return f(); }\n");
  const auto soname = std::string("libevil\x1b[31m\n.so");
  const auto cmd =
      "cd " + q(dir) +
      " && cc -shared -fPIC -o libevil.so -Wl,-soname,\"$(printf 'libevil\\033[31m\\n.so')\" src/lib.c && " +
      "cc -o app src/main.c ./libevil.so -Wl,--dynamic-linker=/lib/ld-missing.so.1 2>&1 && echo ok";
  if (shell_output(cmd) != "ok\n") GTEST_SKIP() << "needs a C compiler";
  const auto run = run_cudoctor({"--root", dir, "ldd", "/app"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.out,
            "/app\n"
            "├── libevil\\x1b[31m\\n.so => not found\n"
            "│   searched, in order: /lib64 /usr/lib64\n"
            "│   (cudoctor ldd /app --why libevil\\x1b[31m\\n.so)\n"
            "└── libc.so.6 => not found\n"
            "    searched, in order: /lib64 /usr/lib64\n"
            "    (cudoctor ldd /app --why libc.so.6)\n"
            "/lib/ld-missing.so.1 => not found  [interpreter: PT_INTERP]\n"
            "3 libraries not found, 0 symbol versions missing\n");
}

}  // namespace
}  // namespace cudoctor::testing
