// cudoctor: finds where the GPU -> driver -> toolkit -> framework chain breaks.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <exception>

#include "cudoctor/cli/check_command.hpp"
#include "cudoctor/cli/options.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace {

void add_common(CLI::App& app, cudoctor::cli::CommonOptions& o) {
  app.add_option("--format", o.format, "Output format")->check(CLI::IsMember({"text", "json", "markdown"}));
  app.add_flag("--json", o.json, "Same as --format json");
  app.add_flag("-v,--verbose", o.verbose, "Show the evidence behind every line");
  app.add_option("--root", o.root, "Read the file system under DIR (a fixture, chroot or mounted image)")
      ->type_name("DIR");
  app.add_flag("--no-runtime", o.no_runtime,
               "Do not load vendor libraries (NVML, libcuda, libcudart) in child processes");
  app.add_flag("--runtime", o.runtime,
               "With --root: load the tree's own vendor libraries in the child probes (they are the tree's code)");
  const CLI::Validator seconds(
      [](const std::string& v) -> std::string {
        try {
          std::size_t used = 0;
          const double d = std::stod(v, &used);
          if (used == v.size() && std::isfinite(d) && d >= 0.1 && d <= 3600) return "";
        } catch (const std::exception&) {
        }
        return "'" + v + "' is not a number of seconds from 0.1 to 3600";
      },
      "SEC");
  app.add_option("--timeout", o.timeout_s, "Seconds NVML, the driver API and the runtimes may take (they run at once)")
      ->check(seconds)
      ->type_name("SEC");
  app.add_option("--compute-timeout", o.compute_timeout_s,
                 "Seconds the computation check (copies and GEMMs on every GPU at once) may take (default 30)")
      ->check(seconds)
      ->type_name("SEC");
  app.add_flag("--redact", o.redact, "Replace host name, user name and home paths");
  app.add_option("--color", o.color, "Colour the text report")->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--python", o.pythons, "Also inspect the environment of this interpreter (repeatable)")
      ->type_name("PATH");
  app.add_option("--kb", o.kb_dir, "Knowledge-base JSON files that replace the built-in ones")->type_name("DIR");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"cudoctor: finds where the NVIDIA GPU -> driver -> CUDA -> framework chain breaks", "cudoctor"};
    app.set_version_flag("--version", std::string("cudoctor ") + CUDOCTOR_VERSION);
    cudoctor::cli::CommonOptions o;
    add_common(app, o);
    app.fallthrough();
    app.require_subcommand(0, 1);
    app.add_subcommand("check", "Check the whole chain (the default)");

    cudoctor::cli::PlanOptions po;
    auto* plan = app.add_subcommand("plan", "Which toolkits and framework builds work with this GPU and driver");
    plan->add_option("--gpu", po.gpu, "A GPU by name (\"RTX 4060 Laptop GPU\") or PCI id (10de:2684)")
        ->type_name("NAME");
    plan->add_option("--cc", po.cc, "A compute capability (8.9)")->type_name("X.Y");
    plan->add_option("--driver", po.driver, "A driver version (535.104.05)")->type_name("VERSION");
    plan->add_option("--framework", po.framework, "torch, tensorflow, jax, cupy or onnxruntime, optionally ==VERSION")
        ->type_name("NAME[==V]");
    plan->add_flag("--all", po.all, "Every build of every release, not only the best of each");

    cudoctor::cli::LddOptions lo;
    auto* ldd = app.add_subcommand("ldd", "Which shared libraries each file loads, and why each one (ld.so-exact)");
    ldd->add_option("files", lo.files, "ELF executables or libraries")->required();
    ldd->add_option("--why", lo.why, "Explain how one library was found (or not)")->type_name("LIB");
    ldd->add_option("--ld-library-path", lo.ld_library_path,
                    "Resolve with this LD_LIBRARY_PATH instead of the environment's")
        ->type_name("DIRS");

    cudoctor::cli::ArchsOptions ao;
    auto* archs = app.add_subcommand("archs", "The SM (cubin) and PTX architectures in the files' CUDA fatbins");
    archs->add_option("files", ao.files, "ELF files")->required();
    archs->add_option("--cc", ao.cc, "Also say whether each file can run on this compute capability")->type_name("X.Y");

    auto* toolkits = app.add_subcommand("toolkits", "Every CUDA toolkit here, and what selects one");
    cudoctor::cli::EnvOptions eo;
    auto* env = app.add_subcommand("env", "Shell lines that switch to one toolkit: eval \"$(cudoctor env 12.4)\"");
    env->add_option("toolkit", eo.toolkit, "A version (12.4, 11.8.89) or a toolkit's directory");
    env->add_option("--shell", eo.shell, "Shell syntax")->check(CLI::IsMember({"bash", "zsh", "fish"}));
    env->add_option("--write", eo.write, "Write a file for direnv (.envrc) or a project instead")->type_name("FILE");
    env->add_flag("--unset", eo.unset, "Take every toolkit off the paths and unset CUDA_HOME");

    cudoctor::cli::KbOptions ko;
    auto* kbc = app.add_subcommand("kb", "What the knowledge base holds, or one answer from it");
    kbc->add_option("topic", ko.topic, "gpu, driver, toolkit or error")
        ->check(CLI::IsMember({"gpu", "driver", "toolkit", "error"}));
    kbc->add_option("query", ko.query, "What to look up");

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int rc = app.exit(e);
      return rc == 0 ? 0 : 2;
    }
    if (o.root.empty()) {
      fmt::print(stderr, "cudoctor: --root: give a directory (--root / for this machine)\n");
      return 2;
    }
    if (app.count("--kb")) {
      // Read through the Sys door: regular files only, and at most 64 MiB each.
      const auto host = cudoctor::sys::make_root_sys("/");
      const auto dir = host->canonical(o.kb_dir.empty() ? std::string("/nonexistent-kb") : o.kb_dir);
      if (o.kb_dir.empty() || !dir || host->stat(*dir).type != cudoctor::sys::FileType::directory) {
        fmt::print(stderr, "cudoctor: --kb {}: not a directory\n", cudoctor::util::visible(o.kb_dir));
        return 2;
      }
      auto kb = cudoctor::kb::KnowledgeBase::load_with_overrides(
          *dir, [&](const std::string& path) -> cudoctor::util::Result<std::optional<std::string>> {
            const auto st = host->stat(path);
            if (st.type == cudoctor::sys::FileType::missing && st.error.empty()) return std::optional<std::string>();
            auto text = host->read_file(path, 64u << 20);
            if (!text) return cudoctor::util::error(text.error());
            return std::optional<std::string>(std::move(text).value());
          });
      if (!kb) {
        fmt::print(stderr, "cudoctor: {}\n", cudoctor::util::visible(kb.error()));
        return 2;
      }
      cudoctor::kb::set_builtin(std::move(kb).value());
    }
    if (plan->parsed()) return cudoctor::cli::run_plan(o, po, CUDOCTOR_VERSION);
    if (kbc->parsed()) return cudoctor::cli::run_kb(o, ko);
    if (ldd->parsed()) return cudoctor::cli::run_ldd(o, lo);
    if (toolkits->parsed()) return cudoctor::cli::run_toolkits(o);
    if (env->parsed()) return cudoctor::cli::run_env(o, eo);
    if (archs->parsed()) return cudoctor::cli::run_archs(o, ao);
    return cudoctor::cli::run_check(o, CUDOCTOR_VERSION);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    // fputs, not fmt::print: a stderr that cannot be written must not throw again here.
    std::fputs(("cudoctor: internal error: " + std::string(e.what()) + "\n").c_str(), stderr);
    return 2;
  }
}
