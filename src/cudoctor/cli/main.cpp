// cudoctor: finds where the GPU -> driver -> toolkit -> framework chain breaks.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fmt/format.h>

#include "cudoctor/cli/check_command.hpp"
#include "cudoctor/cli/options.hpp"

namespace {

void add_common(CLI::App& app, cudoctor::cli::CommonOptions& o) {
  app.add_option("--format", o.format, "Output format")->check(CLI::IsMember({"text", "json", "markdown"}));
  app.add_flag("--json", o.json, "Same as --format json");
  app.add_flag("-v,--verbose", o.verbose, "Show the evidence behind every line");
  app.add_option("--root", o.root, "Read the file system under DIR (a fixture, chroot or mounted image)")
      ->type_name("DIR");
  app.add_flag("--no-runtime", o.no_runtime, "Do not load vendor libraries (NVML) in a child process");
  app.add_option("--timeout", o.timeout_s, "Seconds a child-process probe may take")
      ->check(CLI::Range(0.1, 3600.0))
      ->type_name("SEC");
  app.add_flag("--redact", o.redact, "Replace host name, user name and home paths");
  app.add_option("--color", o.color, "Colour the text report")->check(CLI::IsMember({"auto", "always", "never"}));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"cudoctor: finds where the NVIDIA GPU -> driver -> CUDA -> framework chain breaks", "cudoctor"};
    app.set_version_flag("--version", std::string("cudoctor ") + CUDOCTOR_VERSION);
    cudoctor::cli::CommonOptions o;
    add_common(app, o);
    app.fallthrough();
    auto* check = app.add_subcommand("check", "Check the whole chain (the default)");
    app.require_subcommand(0, 1);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int rc = app.exit(e);
      return rc == 0 ? 0 : 2;
    }
    (void)check;
    return cudoctor::cli::run_check(o, CUDOCTOR_VERSION);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "cudoctor: internal error: {}\n", e.what());
    return 2;
  }
}
