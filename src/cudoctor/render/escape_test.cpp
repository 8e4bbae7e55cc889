// What the renderers print from hostile strings: escaped, one line each, colour intact.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"

namespace cudoctor::render {
namespace {

report::Report hostile_report() {
  report::Report r;
  r.snapshot.host.hostname = "box\x1b]0;PWNED\x07";
  r.checked_layers = {rules::Layer::L1};
  rules::Finding f;
  f.id = "nvml-ok";
  f.layer = rules::Layer::L1;
  f.severity = rules::Severity::error;
  f.title = "GPU 0: NVIDIA H100\n  ✓ Everything is fine";
  f.detail = "driver ≥ 535 \x1b[2J";
  f.evidence = {"name: \xff\xfe"};
  f.fix.commands = {"nvidia-smi -i 0\n rm -rf ~"};
  r.findings = {f};
  r.verdict.healthy = false;
  r.verdict.break_layer = rules::Layer::L1;
  r.verdict.summary = "Broken at L1 driver: GPU 0: NVIDIA H100\n✓ Everything is fine";
  return r;
}

TEST(Escape, TextShowsControlsEscapedAndAddsNoLine) {
  const auto r = hostile_report();
  const auto out = text(r, {.color = false, .verbose = true, .tool_version = "0"});
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_NE(out.find("cudoctor 0 · box\\x1b]0;PWNED\\x07 · this machine\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  ✗ GPU 0: NVIDIA H100\\n ✓ Everything is fine\n"), std::string::npos) << out;
  EXPECT_NE(out.find("      driver ≥ 535 \\x1b[2J\n"), std::string::npos) << out;
  EXPECT_NE(out.find("      · name: \\xff\\xfe\n"), std::string::npos) << out;
  EXPECT_NE(out.find("        $ nvidia-smi -i 0\\n rm -rf ~\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n✗ Broken at L1 driver: GPU 0: NVIDIA H100\\n✓ Everything is fine\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("\n  ✓"), std::string::npos) << "no fake line: " << out;
}

TEST(Escape, ColourStillPaintsEscapedContent) {
  const auto out = text(hostile_report(), {.color = true, .verbose = false, .tool_version = "0"});
  EXPECT_NE(out.find("\033[31m✗\033[0m \033[1mGPU 0: NVIDIA H100\\n ✓ Everything is fine\033[0m"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("\033]0"), std::string::npos);
}

TEST(Escape, MarkdownKeepsEachFindingInItsRow) {
  const auto out = markdown(hostile_report(), {.color = false, .verbose = false, .tool_version = "0"});
  EXPECT_NE(out.find("| L1 driver | ❌ | GPU 0: NVIDIA H100\\n  ✓ Everything is fine |\n"), std::string::npos) << out;
  EXPECT_NE(out.find("- `name: \\xff\\xfe`\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
}

TEST(Escape, JsonNeverThrowsAndWritesNoRawControl) {
  auto r = hostile_report();
  r.snapshot.host.os_pretty_name =
      "csi\xc2\x9b"
      "31m rtl\xe2\x80\xae del\x7f nel\xc2\x85 sep\xe2\x80\xa8";
  const auto out = json(r, {});
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["host"]["os_pretty_name"],
            "csi\xc2\x9b"
            "31m rtl\xe2\x80\xae del\x7f nel\xc2\x85 sep\xe2\x80\xa8")
      << "the \\u escapes read back as the same string";
  EXPECT_NE(out.find(R"(csi\u009b31m rtl\u202e del\u007f nel\u0085 sep\u2028)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("GPU 0: NVIDIA H100\n  ✓ Everything is fine")"), std::string::npos);
  EXPECT_NE(out.find("name: \xef\xbf\xbd\xef\xbf\xbd"), std::string::npos) << "bytes that are not UTF-8 become U+FFFD";
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
}

plan::ShellEnv hostile_env() {
  plan::ShellEnv e;
  e.path = {"/opt/x$(touch X)\\/bin", "/usr/bin\\", "; /usr/bin/touch F #", "/it's"};
  e.ld_library_path = {"/opt/x$(touch X)\\/lib"};
  e.cuda_home = "/opt/x$(touch X)\\";
  e.toolkit_prefixes = {"/opt/x$(touch X)\\"};
  e.chosen_bin = "/opt/x$(touch X)\\/bin";
  e.chosen_lib = "/opt/x$(touch X)\\/lib";
  return e;
}

TEST(Escape, EnvQuotesForEachShell) {
  const auto bash = env_script(hostile_env(), "bash", "cudoctor env: CUDA 12.3 at /opt/x\ntouch INJECTED\n");
  EXPECT_EQ(bash,
            "# cudoctor env: CUDA 12.3 at /opt/x\\ntouch INJECTED\\n\n"
            "export PATH='/opt/x$(touch X)\\/bin:/usr/bin\\:; /usr/bin/touch F #:/it'\\''s'\n"
            "export LD_LIBRARY_PATH='/opt/x$(touch X)\\/lib'\n"
            "export CUDA_HOME='/opt/x$(touch X)\\'\n");
  const auto fish = env_script(hostile_env(), "fish", "c");
  EXPECT_EQ(fish,
            "# c\n"
            "set -gx PATH '/opt/x$(touch X)\\\\/bin' '/usr/bin\\\\' '; /usr/bin/touch F #' '/it\\'s';\n"
            "set -gx LD_LIBRARY_PATH '/opt/x$(touch X)\\\\/lib';\n"
            "set -gx CUDA_HOME '/opt/x$(touch X)\\\\';\n");
  const auto file = env_file(hostile_env(), "a\nb");
  EXPECT_EQ(file.substr(0, file.find('\n') + 1), "# a\\nb\n");
  EXPECT_NE(file.find("export CUDA_HOME='/opt/x$(touch X)\\'\n"), std::string::npos) << file;
}

// ldd --json is written straight into its text: the bytes json_text prints for the same
// document, controls, DEL, C1, bidirectional overrides and invalid UTF-8 escaped the same.
TEST(Escape, JsonWriterPrintsWhatJsonTextPrints) {
  const std::vector<std::string> hostile = {"/opt/x\x7f\u202e.so", "line\nbreak\xc2\x85", "q\"uo\\te", "\xff\xfe bad",
                                            "tab\there",           "\u2066iso\u2069",     "",          "plain"};
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& s : hostile) {
    w.begin_object();
    w.key("empty_list");
    w.begin_array();
    w.end_array();
    w.key("empty_object");
    w.begin_object();
    w.end_object();
    w.key("n");
    w.value(-1);
    w.key("no");
    w.null();
    w.key("s");
    w.strings({s, s});
    w.key("t");
    w.begin_object();
    w.key(s);
    w.value(s);
    w.end_object();
    w.key("yes");
    w.value(true);
    w.end_object();
    doc.push_back({{"empty_list", nlohmann::json::array()},
                   {"empty_object", nlohmann::json::object()},
                   {"n", -1},
                   {"no", nullptr},
                   {"s", {s, s}},
                   {"t", {{s, s}}},
                   {"yes", true}});
  }
  w.end_array();
  EXPECT_EQ(out + "\n", json_text(doc));
  EXPECT_NE(out.find("\\u007f\\u202e"), std::string::npos) << out;
  EXPECT_NE(out.find("\\u0085"), std::string::npos) << out;
  std::string empty;
  JsonWriter e(empty);
  e.begin_array();
  e.end_array();
  EXPECT_EQ(empty + "\n", json_text(nlohmann::json::array()));
}

}  // namespace
}  // namespace cudoctor::render
