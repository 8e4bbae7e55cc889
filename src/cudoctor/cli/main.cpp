// cudoctor: finds where the GPU -> driver -> toolkit -> framework chain breaks.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/options.hpp"
#include "cudoctor/kb/kb.hpp"

int main(int argc, char** argv) {
  using cudoctor::cli::commands;
  try {
    CLI::App app{"cudoctor: finds where the NVIDIA GPU -> driver -> CUDA -> framework chain breaks", "cudoctor"};
    // The built-in knowledge base's date: what it knows stops there (--kb does not change this line).
    app.set_version_flag("--version", [] {
      const auto& date = cudoctor::kb::builtin().date();
      return std::string("cudoctor ") + CUDOCTOR_VERSION + ", knowledge base compiled " +
             (date.empty() ? "(undated)" : date);
    });
    cudoctor::cli::Options o;
    cudoctor::cli::add_common_options(app, o.common);
    app.fallthrough();
    app.require_subcommand(0, 1);
    for (const auto& c : commands()) {
      auto* sub = app.add_subcommand(std::string(c.name), std::string(c.help));
      if (c.add_options) c.add_options(*sub, o);
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int rc = app.exit(e);
      return rc == 0 ? 0 : 2;
    }
    if (!cudoctor::cli::apply_common_options(app, o.common)) return 2;
    const auto* chosen = &commands().front();
    for (const auto& c : commands())
      if (app.got_subcommand(std::string(c.name))) chosen = &c;
    if (o.common.deep && chosen->name != "check") {
      std::fputs("cudoctor: --deep belongs to check\n", stderr);
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
