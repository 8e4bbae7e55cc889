#include <fmt/format.h>

#include "cudoctor/cli/check_command.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/plan/shell_env.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {
namespace {

using util::visible;

std::optional<snapshot::ToolkitFacts> toolkit_facts(const CommonOptions& o, const sys::Sys& sys) {
  if (sys.stat("/").type != sys::FileType::directory) {
    fmt::print(stderr, "cudoctor: --root {}: not a directory\n", visible(o.root));
    return std::nullopt;
  }
  probe::Options popts;
  popts.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  probe::Context ctx(sys, popts);
  return probe::probe_toolkits(ctx);
}

std::string owner(const snapshot::ToolkitFacts& f, const std::string& path) {
  for (const auto& t : f.toolkits)
    if (path == t.root || path.starts_with(t.root + "/") || path == t.bin_dir || path.starts_with(t.bin_dir + "/"))
      return fmt::format("CUDA {} ({})", t.version, t.root);
  return "";
}

}  // namespace

int run_toolkits(const CommonOptions& o) {
  const auto sys = sys::make_root_sys(o.root);
  const auto f = toolkit_facts(o, *sys);
  if (!f) return 2;
  if (o.effective_format() == "json") return emit(redacted(o, *sys, render::json_text(nlohmann::json(*f))), 0);
  std::vector<std::pair<std::string, std::string>> sel;
  sel.emplace_back("PATH", f->path_nvcc.empty() ? "no nvcc" : f->path_nvcc + " -> " + owner(*f, f->path_nvcc_real));
  sel.emplace_back("CUDA_HOME",
                   f->cuda_home ? *f->cuda_home + (owner(*f, sys->canonical(*f->cuda_home).value_or("")).empty()
                                                       ? " (no toolkit there)"
                                                       : " -> " + owner(*f, sys->canonical(*f->cuda_home).value_or("")))
                                : "not set");
  sel.emplace_back("/usr/local/cuda", f->cuda_link_target.empty()     ? "no link"
                                      : f->cuda_link_resolved.empty() ? f->cuda_link_target + " (dangling)"
                                                                      : f->cuda_link_resolved);
  std::string llp = "no toolkit directory";
  for (const auto& d : f->ld_library_path)
    if (const auto w = owner(*f, sys->canonical(d).value_or(d)); !w.empty()) {
      llp = d + " -> " + w;
      break;
    }
  sel.emplace_back("LD_LIBRARY_PATH", llp);
  for (const auto& p : f->cudart_picks)
    sel.emplace_back("loader",
                     fmt::format("{} -> {}", p.soname, p.path.empty() ? "not found" : p.path + " (" + p.rule + ")"));
  return emit(redacted(o, *sys, render::toolkits_text(*f, sel)), 0);
}

int run_env(const CommonOptions& o, const EnvOptions& e) {
  if (o.redact) {
    fmt::print(stderr,
               "cudoctor env: --redact does not apply: env prints shell code to run, and redacted paths are not "
               "the real ones\n");
    return 2;
  }
  const auto sys = sys::make_root_sys(o.root);
  const auto f = toolkit_facts(o, *sys);
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
