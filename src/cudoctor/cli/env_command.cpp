// `cudoctor env VERSION|PATH`: shell lines that switch to a toolkit; 2 when none matches.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>

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
  app.add_option("toolkit", eo.toolkit, "A version (12.4, 11.8.89) or a toolkit's directory")->type_name("VERSION|DIR");
  const std::vector<std::string> shells{"bash", "zsh", "fish"};
  app.add_option("--shell", eo.shell, "Shell syntax (default bash)")->check(one_of(shells))->type_name(choices(shells));
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
    if (e.shell != "bash") {
      fmt::print(stderr, "cudoctor env: --write writes bash for direnv; --shell {} does not apply to it\n",
                 visible(e.shell));
      return 2;
    }
    // The file on this machine (not under --root): other lines of an .envrc are kept.
    const auto host = sys::make_root_sys("/");
    const auto file = e.write.front() == '/' ? e.write : std::filesystem::current_path().string() + "/" + e.write;
    const auto st = host->stat(file);
    std::string existing;
    if (st.type == sys::FileType::fifo || st.type == sys::FileType::directory || st.type == sys::FileType::socket) {
      fmt::print(stderr, "cudoctor env: cannot write {}: it is a {}, not a file\n", visible(e.write),
                 sys::to_string(st.type));
      return 2;
    }
    if (st.type == sys::FileType::regular) {
      auto text = host->read_file(file, 4u << 20);
      if (!text) {
        fmt::print(stderr, "cudoctor env: cannot read {} to keep its other lines: {}\n", visible(e.write),
                   visible(text.error()));
        return 2;
      }
      existing = std::move(text).value();
    }
    const auto merged = render::with_env_block(existing, render::env_file(env, comment));
    if (const auto why = write_file(e.write, merged); !why.empty()) {
      fmt::print(stderr, "cudoctor env: cannot write {}: {}\n", visible(e.write), why);
      return 2;
    }
    fmt::print(stderr, "cudoctor env: {} {}\n", existing.empty() ? "wrote" : "updated its block in", visible(e.write));
    return 0;
  }
  return emit(render::env_script(env, e.shell, comment), 0);
}

}  // namespace cudoctor::cli
