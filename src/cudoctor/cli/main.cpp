// cudoctor: finds where the GPU -> driver -> toolkit -> framework chain breaks.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/help.hpp"
#include "cudoctor/cli/options.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/util/heap.hpp"

namespace {

using namespace cudoctor::cli;

const Command* chosen_of(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands())
    if (const auto* c = find_command(sub->get_name())) return c;
  return nullptr;
}

int usage(const Usage& u) {
  std::fputs((u.message + "\n").c_str(), stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  cudoctor::util::prefer_huge_heap();
  try {
    CLI::App app{"cudoctor: finds where the NVIDIA GPU -> driver -> CUDA -> framework chain breaks", "cudoctor"};
    app.set_version_flag("--version", [] { return version_line(); });
    Options o;
    o.app = &app;
    add_common_options(app, o.common);
    app.fallthrough();
    // Arguments nobody takes are kept (and subcommands inherit this) so that main can say
    // what was probably meant instead of CLI11's "was not expected".
    app.allow_extras();
    app.require_subcommand(0, 1);
    for (const auto& c : commands()) {
      auto* sub = app.add_subcommand(std::string(c.name), std::string(c.help));
      if (c.add_options) c.add_options(*sub, o);
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      return emit(help_text(app, chosen_of(app), output_width()), 0);
    } catch (const CLI::CallForAllHelp&) {
      return emit(help_text(app, chosen_of(app), output_width()), 0);
    } catch (const CLI::CallForVersion&) {
      return emit(version_line() + "\n", 0);
    } catch (const CLI::ParseError& e) {
      return usage(parse_error(chosen_of(app), e.what()));
    }
    o.common.command_line = "cudoctor";
    for (int i = 1; i < argc; ++i) o.common.command_line += " " + cudoctor::rules::fixes::shell_quote(argv[i]);
    const auto* chosen = chosen_of(app);
    if (const auto extra = app.remaining(true); !extra.empty())
      return usage(unknown_argument(app, chosen, extra.front()));
    if (!chosen) chosen = &commands().front();
    if (!apply_common_options(app, o.common)) return 2;
    if (const auto f = o.common.effective_format();
        (f == "prometheus" || f == "npd" || f == "nfd") && chosen->name != "check") {
      std::fputs(("cudoctor " + std::string(chosen->name) + ": --format " + f + " belongs to check\n").c_str(), stderr);
      return 2;
    } else if (f == "html" && chosen->name != "check" && chosen->name != "fleet") {
      std::fputs(("cudoctor " + std::string(chosen->name) + ": --format html belongs to check and fleet\n").c_str(),
                 stderr);
      return 2;
    }
    set_output_file(o.common.output);
    if (o.common.deep && chosen->name != "check") {
      std::fputs("cudoctor: --deep belongs to check\n", stderr);
      return 2;
    }
    for (const char* opt : {"--nfd-namespace", "--nfd-expiry"})
      if (app.count(opt) && o.common.effective_format() != "nfd") {
        std::fputs(("cudoctor: " + std::string(opt) + " goes with check --format nfd\n").c_str(), stderr);
        return 2;
      }
    return chosen->run(o);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    // fputs, not fmt::print: a stderr that cannot be written must not throw again here.
    std::fputs(("cudoctor: internal error: " + std::string(e.what()) + "\n").c_str(), stderr);
    return 2;
  }
}
