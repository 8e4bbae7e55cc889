// check --deep: the frameworks asked in their own interpreters. Every (environment,
// framework) pair runs at once in a child of its own, under one --timeout; the reply is the
// last marker line of its stdout, the step it was in is the last step line.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cudoctor/probe/deep.hpp"
#include "cudoctor/runtime/program.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

constexpr const char* k_asked[] = {"torch", "tensorflow", "jax", "cupy"};

// CUDA's libraries, by the start of their file names: what counts as an extra one.
constexpr const char* k_cuda_families[] = {"libcudart.so",     "libcublas.so", "libcublasLt.so",  "libcudnn",
                                           "libnccl.so",       "libcufft.so",  "libcurand.so",    "libcusparse.so",
                                           "libcusolver.so",   "libnvrtc.so",  "libnvJitLink.so", "libcupti.so",
                                           "libnvToolsExt.so", "libcuda.so"};

bool cuda_library(const std::string& base) {
  return std::any_of(std::begin(k_cuda_families), std::end(k_cuda_families),
                     [&](const char* f) { return base.starts_with(f); });
}

// Whether a mapped file is a copy of the library with this soname: its name is the soname, or
// the soname with more version after it (libcudart.so.12 → libcudart.so.12.4.127).
bool same_library(const std::string& mapped, const std::string& soname) {
  const auto base = sys::basename(mapped);
  return base == soname || (base.starts_with(soname) && base[soname.size()] == '.');
}

struct Owner {
  int uid = -1, gid = -1;
  std::string name, home;
  std::string refused;  // why it must not run at all, "" when it may
};

// From root, whose code an environment is: the owners of its interpreter (links followed),
// prefix and site-packages. Another user's code runs as that user, never as root; code that
// two users own, or that others than its owner may write, does not run.
Owner owner_of(Context& ctx, const snapshot::PythonEnv& env) {
  Owner o;
  if (ctx.sys().identity().uid != 0) return o;
  std::vector<std::string> paths = {env.interpreter, env.prefix};
  paths.insert(paths.end(), env.site_packages.begin(), env.site_packages.end());
  for (const auto& p : paths) {
    const auto st = ctx.sys().stat(p);
    if (st.type == sys::FileType::missing) continue;
    if (st.type == sys::FileType::directory && (st.mode & 0022) != 0 && (st.mode & 01000) == 0) {
      o.refused = p + " may be written by users other than its owner";
      return o;
    }
    if (st.uid == 0) continue;
    if (o.uid >= 0 && o.uid != static_cast<int>(st.uid)) {
      o.refused = "its files belong to more than one user";
      return o;
    }
    o.uid = static_cast<int>(st.uid);
    o.gid = static_cast<int>(st.gid);
  }
  if (o.uid < 0) return o;
  o.name = fmt::format("uid {}", o.uid);
  if (const auto passwd = ctx.read_quiet("/etc/passwd", 4 << 20))
    for (const auto line : util::lines(*passwd)) {
      const auto f = util::split(line, ':');
      if (f.size() >= 6 && f[2] == std::to_string(o.uid)) {
        o.name = std::string(f[0]);
        if (const auto g = util::parse_uint(f[3])) o.gid = static_cast<int>(*g);
        o.home = std::string(f[5]);
        break;
      }
    }
  return o;
}

snapshot::DeepView parse(const runtime::ProgramRun& run) {
  snapshot::DeepView d;
  const auto& o = run.outcome;
  d.status = o.status == snapshot::ChildStatus::ok ? "ok" : snapshot::to_string(o.status);
  d.signal = o.signal;
  d.exit_code = o.exit_code;
  d.seconds = o.seconds;
  d.message = o.message;
  d.stderr_tail = run.err_tail;
  for (const auto line : util::lines(run.out))
    if (line.starts_with("@@cudoctor-step@@ ")) d.last_step = std::string(line.substr(18));
  const auto at = run.out.rfind("\n@@cudoctor-deep@@ ");
  if (at == std::string::npos) {
    if (d.status == "ok") d.status = "no_reply";
    return d;
  }
  const auto end = run.out.find('\n', at + 1);
  const auto j = nlohmann::json::parse(
      run.out.substr(at + 19, end == std::string::npos ? std::string::npos : end - at - 19), nullptr, false);
  if (!j.is_object()) {
    d.status = "no_reply";
    return d;
  }
  d.last_step.clear();  // it finished
  const auto str = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : ""; };
  const auto num = [&](const char* k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<int>() : -1; };
  const auto list = [&](const char* k) {
    std::vector<std::string> v;
    if (j.contains(k) && j[k].is_array())
      for (const auto& e : j[k])
        if (e.is_string()) v.push_back(e.get<std::string>());
    return v;
  };
  d.imported = j.contains("imported") && j["imported"].is_boolean() && j["imported"].get<bool>();
  d.error = str("error");
  d.version = str("version");
  d.cuda = str("cuda");
  d.available = num("available");
  d.device_count = num("device_count");
  d.devices = list("devices");
  d.arch_list = list("arch_list");
  d.matmul = str("matmul");
  d.ld_preload = str("ld_preload");
  d.preloaded = list("preloaded");
  d.mapped = list("mapped");
  return d;
}

// Pairs the prediction's libraries with what was mapped, and lists the CUDA libraries mapped
// that no prediction of the environment has.
void pair(Context& ctx, const snapshot::PythonEnv& env, const snapshot::Framework& fw, snapshot::DeepView& d) {
  for (const auto& lib : fw.libraries) {
    snapshot::DeepLibrary l{lib.soname, lib.path, "", ""};
    if (!lib.path.empty())
      if (const auto real = ctx.sys().canonical(lib.path)) l.predicted_real = *real;
    for (const auto& m : d.mapped)
      if (same_library(m, lib.soname)) {
        l.mapped = m;
        break;
      }
    d.libraries.push_back(std::move(l));
  }
  for (const auto& m : d.mapped) {
    if (!cuda_library(sys::basename(m)) || sys::basename(m).starts_with("libcuda.so")) continue;
    bool predicted = false;
    for (const auto& other : env.frameworks)
      for (const auto& lib : other.libraries) predicted = predicted || same_library(m, lib.soname);
    if (!predicted) d.extra.push_back(m);
  }
}

}  // namespace

void probe_deep(Context& ctx, snapshot::PythonFacts& python) {
  std::vector<runtime::Program> programs;
  std::vector<std::pair<std::size_t, std::size_t>> which;  // (env, framework)
  std::vector<std::string> env;                            // the interpreter sees what a shell here would give it
  for (const auto& name : ctx.sys().env_names())
    if (const auto v = ctx.sys().env(name); v && name != "PYTHONDONTWRITEBYTECODE") env.push_back(name + "=" + *v);
  // Nothing is written into the environment it inspects.
  env.emplace_back("PYTHONDONTWRITEBYTECODE=1");
  for (std::size_t i = 0; i < python.envs.size(); ++i) {
    auto& pe = python.envs[i];
    for (std::size_t k = 0; k < pe.frameworks.size(); ++k) {
      auto& fw = pe.frameworks[k];
      if (std::find(std::begin(k_asked), std::end(k_asked), fw.name) == std::end(k_asked)) continue;
      if (fw.inherited) continue;  // asked in the environment it comes from
      if (pe.interpreter.empty()) {
        fw.deep.emplace();
        fw.deep->status = "skipped";
        fw.deep->message = "no interpreter found for this environment";
        continue;
      }
      const auto owner = owner_of(ctx, pe);
      programs.push_back(
          {{ctx.sys().host_path(pe.interpreter), "-c", deep_script(), fw.name}, env, owner.uid, owner.gid});
      which.emplace_back(i, k);
      fw.deep.emplace();
      fw.deep->run_as = owner.name;
    }
  }
  if (programs.empty()) return;
  const auto runs = runtime::run_programs(programs, ctx.options().timeout);
  for (std::size_t n = 0; n < runs.size(); ++n) {
    auto& pe = python.envs[which[n].first];
    auto& fw = pe.frameworks[which[n].second];
    const auto run_as = fw.deep->run_as;
    fw.deep = parse(runs[n]);
    fw.deep->run_as = run_as;
    pair(ctx, pe, fw, *fw.deep);
  }
}

}  // namespace cudoctor::probe
