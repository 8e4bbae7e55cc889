// cudoctor(1), written in man(7) roff from the same parser and table as --help.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/help.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {
namespace {

// Text for roff: backslashes escaped, hyphens as \- (so that options copy as ASCII), and a
// line that would start with a control character ('.' or ') protected by \&.
std::string roff(std::string_view s) {
  std::string out;
  bool line_start = true;
  for (const char c : s) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string option_name(const OptionDoc& o) {
  if (o.positional) return fmt::format("\\fI{}\\fR", roff(o.value));
  std::string name;
  for (const auto& n : o.names) name += (name.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff(n));
  if (!o.value.empty()) name += fmt::format(" \\fI{}\\fR", roff(o.value));
  return name;
}

void options(std::string& out, const std::vector<OptionDoc>& opts) {
  for (const auto& o : opts) out += fmt::format(".TP\n{}\n{}\n", option_name(o), roff(o.help));
}

// Lines "A\tB" as tagged paragraphs; command lines in bold.
void pairs(std::string& out, std::string_view lines, bool bold) {
  for (const auto& [a, b] : split_pairs(lines))
    out += fmt::format(".TP\n{}{}{}\n{}\n", bold ? "\\fB" : "", roff(a), bold ? "\\fR" : "", roff(b));
}

}  // namespace

std::string man_page(const CLI::App& root, std::string_view date) {
  std::string out;
  out += fmt::format(".TH CUDOCTOR 1 \"{}\" \"cudoctor {}\" \"User Commands\"\n", roff(date), CUDOCTOR_VERSION);
  out += ".SH NAME\ncudoctor \\- find where the NVIDIA GPU, driver, CUDA toolkit and framework chain breaks\n";
  out += ".SH SYNOPSIS\n.B cudoctor\n[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]\n";
  out += ".SH DESCRIPTION\n" +
         roff(
             "cudoctor reads the machine the way the loader and the driver do and checks the chain bottom-up: "
             "L0 host, L1 driver, L2 toolkit, L3 framework, L4 runtime, L5 application. It names the lowest "
             "broken link, shows the evidence and prints the commands that fix it. Nothing of the examined "
             "machine is executed except the vendor libraries loaded in crash-isolated child processes "
             "(none with --no-runtime), and nothing is written to the system.") +
         "\n.PP\nWith no command, \\fBcudoctor\\fR runs \\fBcheck\\fR.\n";
  out += ".SH COMMANDS\n";
  for (const auto& d : command_docs(root)) {
    std::string synopsis = fmt::format("cudoctor {}", d.command->name);
    for (const auto& o : d.own)
      if (o.positional) synopsis += fmt::format(" [{}{}]", o.value, o.repeats ? "..." : "");
    out += fmt::format(".SS \"{}\"\n{}\n", roff(synopsis), roff(d.command->help));
    if (!d.own.empty()) {
      out += ".PP\nOptions:\n.RS\n";
      options(out, d.own);
      out += ".RE\n";
    }
    if (!d.common.empty()) {
      std::string groups;
      for (const auto g : util::split_ws(d.command->groups))
        groups += (groups.empty() ? "" : ", ") + std::string(g == k_check_group ? "check" : g);
      out += fmt::format(".PP\nCommon options: {} (see \\fBCOMMON OPTIONS\\fR).\n", roff(groups));
    }
    if (!d.command->examples.empty()) {
      out += ".PP\nExamples:\n.RS\n";
      pairs(out, d.command->examples, true);
      out += ".RE\n";
    }
    out += ".PP\nExit status:\n.RS\n";
    pairs(out, d.command->exits, false);
    out += ".RE\n";
  }
  out += ".SH COMMON OPTIONS\n";
  const auto common = common_options(root);
  for (const auto group : {k_output_group, k_machine_group, k_probe_group, k_check_group}) {
    out += fmt::format(".SS \"{} options\"\n", group == k_check_group ? std::string_view("check") : group);
    std::vector<OptionDoc> in;
    for (const auto& o : common)
      if (o.group == group) in.push_back(o);
    options(out, in);
  }
  out +=
      ".SS \"Other options\"\n.TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nHelp; after a command, that command's.\n"
      ".TP\n\\fB\\-\\-version\\fR\nThe version, the commit and the knowledge base's date.\n";
  out += ".SH EXIT STATUS\n";
  pairs(out, k_exit_codes, false);
  out += ".SH ENVIRONMENT\n";
  pairs(out, std::string(k_machine_env) + std::string(k_display_env), false);
  out += ".SH FILES\n";
  pairs(out,
        "/sys/bus/pci/devices\tThe GPUs, their links and power states.\n"
        "/proc/driver/nvidia\tThe loaded kernel driver and its parameters.\n"
        "/etc/ld.so.cache\tThe loader's cache, parsed directly.\n"
        "/usr/share/doc/cudoctor/findings.md\tEvery finding: what it means, its evidence and its fix.\n",
        false);
  out += ".SH SEE ALSO\n\\fBldd\\fR(1), \\fBld.so\\fR(8), \\fBnvidia\\-smi\\fR(1), \\fBdirenv\\fR(1)\n";
  return out;
}

}  // namespace cudoctor::cli
