// L3: the Python environments a user may mean and the frameworks in them, read from the file
// system without running Python or importing anything. This file finds the environments;
// framework_detect.cpp finds the frameworks in each, framework_libraries.cpp resolves their
// GPU libraries and reads their fatbins.
#include <algorithm>
#include <unordered_map>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/framework_detect.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/probe/python_env.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

using snapshot::PythonEnv;

// Each list of environments (pyenv's versions, conda's environments.txt, an envs directory)
// is inspected up to this many entries, so a directory anyone can write to cannot make a run
// take minutes; the rest is recorded as not inspected. Real machines have tens, a busy shared
// one a few hundred.
constexpr std::size_t k_max_listed = 10000;

bool is_dir(const sys::Sys& sys, const std::string& p) {
  return sys.stat(p).type == sys::FileType::directory;
}
bool exists(const sys::Sys& sys, const std::string& p) {
  return sys.stat(p).type != sys::FileType::missing;
}

// An environment a user may mean, before it is looked at.
struct Candidate {
  std::string prefix, interpreter, kind, found_by;
};

// Where candidates are collected, with the lists cut at k_max_listed.
struct Discovery {
  Context& ctx;
  snapshot::PythonFacts& facts;
  std::string home;
  std::string pyenv_root;
  std::vector<Candidate> cands;

  // The first k_max_listed entries of a list of environments, the rest recorded as not inspected.
  std::size_t listed(const std::string& source, std::size_t entries) {
    if (entries > k_max_listed) facts.lists_cut.push_back({source, entries, k_max_listed});
    return std::min(entries, k_max_listed);
  }
  // Every directory in dir as an environment of kind, found by found_by.
  void add_listed(const std::string& dir, const char* kind, const char* found_by) {
    const auto names = ctx.list_optional(dir);
    if (!names) return;
    const auto n = listed(dir, names->size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto prefix = dir + "/" + (*names)[i];
      cands.push_back({prefix, prefix + "/bin/python3", kind, found_by});
    }
  }
};

// The environment of an interpreter: a venv's bin/python links to its base interpreter, so
// the venv is the directory with pyvenv.cfg (or conda-meta) above bin/, else the real one's.
std::string prefix_of(const sys::Sys& sys, const std::string& interpreter) {
  const auto up = sys::dirname(sys::dirname(interpreter));
  if (exists(sys, up + "/pyvenv.cfg") || exists(sys, up + "/conda-meta")) return up;
  return sys::dirname(sys::dirname(sys.canonical(interpreter).value_or(interpreter)));
}

// The first python3 (or python) on PATH and its environment. pyenv's shims are scripts: the
// version in effect (PYENV_VERSION, else $PYENV_ROOT/version) names the environment.
void add_path_python(Discovery& d) {
  const auto& sys = d.ctx.sys();
  auto& facts = d.facts;
  const auto path = sys.env("PATH").value_or("");
  for (const auto dir : util::split(path, ':')) {
    if (dir.empty()) continue;
    for (const char* name : {"python3", "python"}) {
      const auto p = std::string(dir) + "/" + name;
      if (sys.stat(p).type != sys::FileType::regular) continue;
      facts.path_python = p;
      if (!std::string(dir).ends_with("/.pyenv/shims")) {
        facts.path_python_env = prefix_of(sys, p);
        d.cands.push_back({facts.path_python_env, p, "path", "python3 on PATH"});
        return;
      }
      auto version = sys.env("PYENV_VERSION").value_or("");
      if (version.empty())
        if (const auto v = d.ctx.read_optional(d.pyenv_root + "/version", 4096)) version = std::string(util::trim(*v));
      version = version.substr(0, version.find(':'));
      if (!version.empty() && version != "system") {
        facts.path_python_env = d.pyenv_root + "/versions/" + version;
        d.cands.push_back(
            {facts.path_python_env, facts.path_python_env + "/bin/python3", "pyenv", "python3 on PATH (pyenv shim)"});
      }
      return;
    }
  }
}

// conda's own list of the environments it created, ~/.conda/environments.txt.
void add_conda_list(Discovery& d) {
  const auto environments_txt = d.home + "/.conda/environments.txt";
  const auto list = d.ctx.read_optional(environments_txt, 16 << 20);
  if (!list) return;
  std::vector<std::string> envs;
  for (const auto line : util::lines(*list))
    if (const auto env = util::trim(line); !env.empty()) envs.emplace_back(env);
  const auto n = d.listed(environments_txt, envs.size());
  for (std::size_t i = 0; i < n; ++i)
    d.cands.push_back({envs[i], envs[i] + "/bin/python3", "conda", "~/.conda/environments.txt"});
}

// Every environment a user may mean, in the order they are reported: PATH's, the activated
// venv and conda environment, the system's, the given interpreters, pyenv's, conda's.
std::vector<Candidate> candidates(Context& ctx, snapshot::PythonFacts& facts, const std::vector<std::string>& given) {
  const auto& sys = ctx.sys();
  Discovery d{ctx, facts, sys.env("HOME").value_or(""), "", {}};
  d.pyenv_root = sys.env("PYENV_ROOT").value_or(d.home + "/.pyenv");
  add_path_python(d);
  if (const auto v = sys.env("VIRTUAL_ENV")) d.cands.push_back({*v, *v + "/bin/python3", "venv", "VIRTUAL_ENV"});
  if (const auto c = sys.env("CONDA_PREFIX")) d.cands.push_back({*c, *c + "/bin/python3", "conda", "CONDA_PREFIX"});
  if (exists(sys, "/usr/bin/python3")) d.cands.push_back({"/usr", "/usr/bin/python3", "system", "system interpreter"});
  for (const auto& g : given) d.cands.push_back({prefix_of(sys, g), g, "given", "--python"});
  d.add_listed(d.pyenv_root + "/versions", "pyenv", "pyenv version");
  add_conda_list(d);
  for (const auto& base :
       {std::string("/opt/conda"), d.home + "/miniconda3", d.home + "/anaconda3", d.home + "/.conda"})
    d.add_listed(base + "/envs", "conda", "conda environment");
  return std::move(d.cands);
}

// The environment at c.prefix, its layout and frameworks.
PythonEnv inspect(Context& ctx, ld::Resolver& resolver, const Candidate& c, const std::string& home) {
  const auto& sys = ctx.sys();
  PythonEnv env;
  env.prefix = c.prefix;
  env.interpreter = exists(sys, c.interpreter) ? c.interpreter : "";
  env.kind = exists(sys, c.prefix + "/pyvenv.cfg") ? "venv" : exists(sys, c.prefix + "/conda-meta") ? "conda" : c.kind;
  if (c.prefix == "/usr") env.kind = "system";
  env.found_by.push_back(c.found_by);
  env.site_packages = sites_of(ctx, c.prefix, env.kind, env.version);
  // The user's site-packages belong to every interpreter outside a venv (PEP 370).
  if (!home.empty() && !env.version.empty() && (env.kind == "system" || env.kind == "pyenv" || env.kind == "path"))
    if (const auto user = home + "/.local/lib/python" + env.version + "/site-packages"; is_dir(sys, user))
      env.site_packages.insert(env.site_packages.begin(), user);
  env.conda_meta = is_dir(sys, c.prefix + "/conda-meta");
  if (exists(sys, c.prefix + "/pyvenv.cfg"))
    if (const auto cfg = read_pyvenv_cfg(ctx, c.prefix)) {
      env.system_site_packages = cfg->system_site_packages;
      env.base_prefix = cfg->base_prefix;
    }
  for (const auto& site : env.site_packages) frameworks_in(ctx, resolver, site, env.prefix, false, env);
  // site.py adds the base's site-packages after the venv's own when the flag is set; only
  // the base's directories for the venv's Python version are importable.
  if (env.system_site_packages && !env.base_prefix.empty() && !env.version.empty()) {
    auto version = env.version;
    const auto base_kind = env.base_prefix == "/usr" ? "system" : "base";
    for (const auto& site : sites_of(ctx, env.base_prefix, base_kind, version)) {
      if (std::find(env.site_packages.begin(), env.site_packages.end(), site) != env.site_packages.end()) continue;
      env.site_packages.push_back(site);
      frameworks_in(ctx, resolver, site, env.base_prefix, true, env);
    }
  }
  return env;
}

}  // namespace

snapshot::PythonFacts probe_python(Context& ctx, const std::vector<std::string>& given) {
  const auto& sys = ctx.sys();
  snapshot::PythonFacts facts;
  const auto cands = candidates(ctx, facts, given);
  const auto home = sys.env("HOME").value_or("");
  auto& resolver = ctx.resolver();
  // Each candidate's canonical prefix is computed once; an environment found again (a link,
  // another list naming it) only gains a found_by.
  std::unordered_map<std::string, std::size_t> by_real;
  for (const auto& c : cands) {
    const auto real = sys.canonical(c.prefix).value_or(c.prefix);
    if (const auto it = by_real.find(real); it != by_real.end()) {
      auto& found_by = facts.envs[it->second].found_by;
      if (std::find(found_by.begin(), found_by.end(), c.found_by) == found_by.end()) found_by.push_back(c.found_by);
      continue;
    }
    if (!is_dir(sys, c.prefix)) continue;
    facts.envs.push_back(inspect(ctx, resolver, c, home));
    by_real.emplace(real, facts.envs.size() - 1);
  }
  return facts;
}

}  // namespace cudoctor::probe
