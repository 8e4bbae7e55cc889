// `cudoctor env VERSION|PATH`: shell lines that switch to a toolkit; 2 when none matches.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/plan/shell_env.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

using util::visible;

void add_env_options(CLI::App& app, Options& o) {
  auto& eo = o.env;
  app.add_option("toolkit", eo.toolkit, "A version (12.4, 11.8.89) or a toolkit's directory");
  app.add_option("--shell", eo.shell, "Shell syntax")->check(CLI::IsMember({"bash", "zsh", "fish"}));
  app.add_option("--write", eo.write, "Write a file for direnv (.envrc) or a project instead")->type_name("FILE");
  app.add_flag("--unset", eo.unset, "Take every toolkit off the paths and unset CUDA_HOME");
}

int run_env(const Options& all) {
  const auto& o = all.common;
  const auto& e = all.env;
  if (o.redact) {
    fmt::print(stderr,
               "cudoctor env: --redact does not apply: env prints shell code to run, and redacted paths are not "
               "the real ones\n");
    return 2;
  }
  const auto sys = sys::make_root_sys(o.root);
  const auto f = gather_toolkits(o, *sys);
  if (!f) return 2;
  const snapshot::Toolkit* target = nullptr;
  if (!e.unset) {
    if (e.toolkit.empty()) {
      fmt::print(stderr, "cudoctor env: name a toolkit by version (12.4) or path, or give --unset\n");
      return 2;
    }
    const auto arg = e.toolkit.front() == '/' ? sys->canonical(e.toolkit).value_or(e.toolkit) : e.toolkit;
    target = plan::find_toolkit(*f, arg);
    if (!target) {
      std::string have;
      for (const auto& t : f->toolkits) have += fmt::format("\n  {} {}", visible(t.version), visible(t.root));
      fmt::print(stderr, "cudoctor env: no toolkit matches '{}'; found:{}\n", visible(e.toolkit),
                 have.empty() ? " none" : have);
      return 2;
    }
    // Quoting would keep such a path inert, but no shell profile or .envrc should carry it.
    for (const auto& p : {target->root, target->bin_dir, target->lib_dir})
      if (util::has_control(sys->host_path(p))) {
        fmt::print(stderr, "cudoctor env: the toolkit's path {} holds a control character; rename it before using it\n",
                   visible(sys->host_path(p)));
        return 2;
      }
  }
  const auto env = plan::shell_env(*f, target, [&](const std::string& p) { return sys->host_path(p); });
  const auto comment = target
                           ? fmt::format("cudoctor env: CUDA {} at {}", target->version, sys->host_path(target->root))
                           : std::string("cudoctor env --unset: no CUDA toolkit on the paths");
  if (!e.write.empty()) {
    if (const auto why = write_file(e.write, render::env_file(env, comment)); !why.empty()) {
      fmt::print(stderr, "cudoctor env: cannot write {}: {}\n", visible(e.write), why);
      return 2;
    }
    fmt::print(stderr, "cudoctor env: wrote {}\n", visible(e.write));
    return 0;
  }
  return emit(render::env_script(env, e.shell, comment), 0);
}

}  // namespace cudoctor::cli
