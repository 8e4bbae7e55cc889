// L3: the Python environments a user may mean and the frameworks in them, read from the file
// system (version.py, build_info.py, dist-info) without running Python or importing anything;
// each framework's GPU library resolved through ld/ and its fatbin read through elf/.
#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>
#include <unordered_map>

#include "cudoctor/elf/fatbin.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/probe/python_env.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

using snapshot::Framework;
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

// `name = 'value'` / `name: Optional[str] = None` assignments of a generated version file.
std::map<std::string, std::string> assignments(const std::string& text) {
  std::map<std::string, std::string> out;
  // TensorFlow's build_info.py: build_info['cuda_version'] = '12.3'.
  static const std::regex item(
      R"re(\[\s*'([A-Za-z_][A-Za-z0-9_]*)'\s*\]\s*=\s*(?:'([^']*)'|"([^"]*)"|(None|True|False|[0-9.]+)))re");
  static const std::regex re(
      R"re(^\s*'?([A-Za-z_][A-Za-z0-9_]*)'?\s*(?::[^=]*)?[=:]\s*(?:'([^']*)'|"([^"]*)"|(None|True|False|[0-9.]+)))re");
  for (const auto line : util::lines(text)) {
    std::smatch m;
    const std::string l(line);
    if (std::regex_search(l, m, item) || std::regex_search(l, m, re))
      out[m[1]] = m[2].matched ? m[2].str() : m[3].matched ? m[3].str() : m[4].str();
  }
  return out;
}

// An assignment's value; "" when it is absent or None.
std::string value(const std::map<std::string, std::string>& a, const std::string& key) {
  const auto it = a.find(key);
  return it == a.end() || it->second == "None" ? "" : it->second;
}

std::vector<std::pair<std::string, std::string>> dist_infos(const sys::Sys& sys, const std::string& site) {
  std::vector<std::pair<std::string, std::string>> out;
  if (const auto names = sys.list_dir(site))
    for (const auto& n : *names)
      for (const char* ext : {".dist-info", ".egg-info"})
        if (n.ends_with(ext)) {
          const auto stem = n.substr(0, n.size() - std::string_view(ext).size());
          const auto dash = stem.find('-');
          if (dash != std::string::npos) out.emplace_back(stem.substr(0, dash), stem.substr(dash + 1));
        }
  return out;
}

std::vector<std::string> requires_nvidia(const sys::Sys& sys, const std::string& site, const std::string& dist,
                                         const std::string& version) {
  std::vector<std::string> out;
  const auto meta = sys.read_file(fmt::format("{}/{}-{}.dist-info/METADATA", site, dist, version), 4 << 20);
  if (!meta) return out;
  for (const auto line : util::lines(*meta))
    if (line.starts_with("Requires-Dist: nvidia-")) {
      auto req = std::string(util::trim(line.substr(15)));
      if (const auto semi = req.find(';'); semi != std::string::npos)
        req = std::string(util::trim(req.substr(0, semi)));
      out.push_back(req);
    }
  return out;
}

// The CUDA libraries a framework's GPU library pulls in, as the loader resolves them.
void resolve(Context& ctx, ld::Resolver& resolver, const std::string& site, Framework& fw) {
  const auto& sys = ctx.sys();
  auto tree = resolver.load(fw.gpu_library);
  if (!tree) {
    fw.error = tree.error();
    return;
  }
  static const std::regex cuda_lib(
      R"(^lib(cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|cufft|cusparse|curand|cusolver|nvrtc|nvJitLink|cupti|nvToolsExt)\.so)");
  // Copies the environment ships: site-packages/nvidia/<component>/lib/<soname>.
  const auto bundled_copy = [&](const std::string& soname) -> std::string {
    if (const auto comps = sys.list_dir(site + "/nvidia"))
      for (const auto& c : *comps)
        if (const auto p = site + "/nvidia/" + c + "/lib/" + soname; exists(sys, p)) return p;
    if (const auto p = sys::dirname(fw.gpu_library) + "/" + soname; exists(sys, p)) return p;
    return "";
  };
  const auto same_file = [&](const std::string& a, const std::string& b) {
    return sys.canonical(a).value_or(a) == sys.canonical(b).value_or(b);
  };
  for (std::size_t i = 1; i < tree->objects.size(); ++i) {
    const auto& o = tree->objects[i];
    if (!o.found) {
      if (o.name != "libcuda.so.1") fw.missing.push_back(o.name);
      continue;
    }
    for (const auto& v : o.missing_versions) fw.missing_versions.push_back(v + " (needed by " + o.path + ")");
    if (!std::regex_search(o.name, cuda_lib)) continue;
    snapshot::FrameworkLibrary l{o.name, o.path, ld::to_string(o.lookup.rule), "", bundled_copy(o.name)};
    // The copy the loader takes is the bundled one when it is the same file ($ORIGIN/../.. paths).
    if (!l.bundled.empty() && same_file(l.bundled, l.path)) l.bundled = l.path;
    const auto real = sys::basename(sys.canonical(o.path).value_or(o.path));
    if (const auto dot = real.find(".so."); dot != std::string::npos) l.version = real.substr(dot + 4);
    fw.libraries.push_back(std::move(l));
  }
  for (const auto& v : tree->objects[0].missing_versions)
    fw.missing_versions.push_back(v + " (needed by " + fw.gpu_library + ")");
  // GPU architectures: the fatbins of the framework's own libraries.
  std::set<std::string> sm, ptx;
  if (const auto names = sys.list_dir(sys::dirname(fw.gpu_library)))
    for (const auto& n : *names) {
      if (n.find(".so") == std::string::npos) continue;
      const auto blob = sys.map_file(sys::dirname(fw.gpu_library) + "/" + n);
      if (!blob) continue;
      const auto elf = elf::parse_elf((*blob)->data(), (*blob)->size());
      if (!elf) continue;
      const auto fb = elf::read_fatbin(*elf, (*blob)->data(), (*blob)->size());
      if (!fb || !*fb || (*blob)->shrank()) continue;  // a library being replaced says nothing
      for (const auto& a : (*fb)->sm_archs()) sm.insert(a);
      for (const auto& a : (*fb)->ptx_archs()) ptx.insert(a);
    }
  fw.sm_archs.assign(sm.begin(), sm.end());
  fw.ptx_archs.assign(ptx.begin(), ptx.end());
  const auto by_arch = [](const std::string& a, const std::string& b) {
    const auto num = [](const std::string& s) { return std::atoi(s.c_str() + s.find('_') + 1); };
    return num(a) < num(b);
  };
  std::sort(fw.sm_archs.begin(), fw.sm_archs.end(), by_arch);
  std::sort(fw.ptx_archs.begin(), fw.ptx_archs.end(), by_arch);
}

std::string first_existing(const sys::Sys& sys, std::initializer_list<std::string> paths) {
  for (const auto& p : paths)
    if (exists(sys, p)) return p;
  return "";
}

// The frameworks in one site-packages directory of env, which belongs to the environment at
// owner (env's own prefix, or its base's when inherited). An inherited framework that env
// already has from its own directories is not imported from the base (it comes later on
// sys.path) and is left out.
void frameworks_in(Context& ctx, ld::Resolver& resolver, const std::string& site, const std::string& owner,
                   bool inherited, PythonEnv& env) {
  const auto& sys = ctx.sys();
  const auto dists = dist_infos(sys, site);
  for (const auto& [name, version] : dists)
    if (name.starts_with("nvidia_")) env.nvidia_packages.emplace_back(name, version);
  const auto dist_version = [&](std::initializer_list<std::string> names) -> std::pair<std::string, std::string> {
    for (const auto& n : names)
      for (const auto& [dn, dv] : dists)
        if (util::to_lower(dn) == n) return {dn, dv};
    return {};
  };
  const auto found = [&](const char* name, const std::string& location, const std::string& source) {
    Framework fw;
    fw.name = name;
    fw.location = location;
    fw.source = source;
    return fw;
  };
  const auto add = [&](Framework fw, const std::string& dist, const std::string& version,
                       std::initializer_list<const char*> conda_names) {
    if (inherited && std::any_of(env.frameworks.begin(), env.frameworks.end(),
                                 [&](const Framework& f) { return f.name == fw.name; }))
      return;
    fw.inherited = inherited;
    fw.installer = installer_of(sys, site, dist, version, owner, conda_names);
    if (!fw.gpu_library.empty()) resolve(ctx, resolver, site, fw);
    env.frameworks.push_back(std::move(fw));
  };
  // PyTorch: torch/version.py, written by its build.
  if (const auto text = ctx.read_optional(site + "/torch/version.py", 64 * 1024)) {
    auto fw = found("torch", site + "/torch", "torch/version.py");
    const auto a = assignments(*text);
    fw.version = value(a, "__version__");
    fw.cuda = value(a, "cuda");
    fw.hip = value(a, "hip");
    const auto [dn, dv] = dist_version({"torch"});
    if (!dn.empty()) fw.requires_nvidia = requires_nvidia(sys, site, dn, dv);
    if (!fw.cuda.empty())
      fw.gpu_library =
          first_existing(sys, {site + "/torch/lib/libtorch_cuda.so", site + "/torch/lib/libtorch_cuda_cu.so",
                               site + "/torch/lib/libc10_cuda.so"});
    add(std::move(fw), dn, dv, {"pytorch", "pytorch-gpu"});
  }
  // TensorFlow: tensorflow/python/platform/build_info.py.
  if (const auto text = ctx.read_optional(site + "/tensorflow/python/platform/build_info.py", 64 * 1024)) {
    auto fw = found("tensorflow", site + "/tensorflow", "tensorflow/python/platform/build_info.py");
    const auto a = assignments(*text);
    if (value(a, "is_cuda_build") == "True") fw.cuda = value(a, "cuda_version");
    fw.cudnn = value(a, "cudnn_version");
    if (value(a, "is_rocm_build") == "True") fw.hip = a.count("rocm_version") ? value(a, "rocm_version") : "yes";
    const auto [dn, dv] = dist_version({"tensorflow", "tensorflow_gpu", "tensorflow_cpu"});
    fw.version = dv;
    fw.gpu_library = fw.cuda.empty() ? "" : first_existing(sys, {site + "/tensorflow/libtensorflow_framework.so.2"});
    add(std::move(fw), dn, dv, {"tensorflow"});
  }
  // JAX: jaxlib, and the CUDA plugin packages that make it use a GPU.
  if (const auto text = ctx.read_optional(site + "/jaxlib/version.py", 64 * 1024)) {
    auto fw = found("jax", site + "/jaxlib", "jaxlib/version.py");
    const auto a = assignments(*text);
    fw.version = a.count("_version") ? value(a, "_version") : value(a, "__version__");
    for (const char* major : {"13", "12"}) {
      const auto plugin = site + "/jax_plugins/xla_cuda" + major + "/xla_cuda_plugin.so";
      if (fw.cuda.empty() && exists(sys, plugin)) {
        fw.cuda = major;
        fw.gpu_library = plugin;
      }
    }
    const auto [dn, dv] = dist_version({"jaxlib"});
    add(std::move(fw), dn, dv, {"jaxlib", "jax"});
  }
  // CuPy and ONNX Runtime: named by their wheels.
  for (const auto& [dn, dv] : dists) {
    const auto n = util::to_lower(dn);
    if (n.starts_with("cupy_cuda")) {
      auto fw = found("cupy", site + "/cupy", "dist-info " + dn);
      fw.version = dv;
      fw.cuda = n.substr(9);  // "cupy_cuda12x" -> "12x" -> "12"
      if (!fw.cuda.empty() && fw.cuda.back() == 'x') fw.cuda.pop_back();
      fw.requires_nvidia = requires_nvidia(sys, site, dn, dv);
      add(std::move(fw), dn, dv, {"cupy"});
    } else if (n == "onnxruntime_gpu") {
      auto fw = found("onnxruntime", site + "/onnxruntime", "dist-info " + dn);
      fw.version = dv;
      fw.gpu_library = first_existing(sys, {site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so"});
      fw.cuda = fw.gpu_library.empty() ? "" : "12";
      add(std::move(fw), dn, dv, {"onnxruntime"});
    }
  }
}

}  // namespace

snapshot::PythonFacts probe_python(Context& ctx, const std::vector<std::string>& given) {
  const auto& sys = ctx.sys();
  snapshot::PythonFacts facts;
  struct Cand {
    std::string prefix, interpreter, kind, found_by;
  };
  std::vector<Cand> cands;
  // The first k_max_listed entries of a list of environments, the rest recorded as not inspected.
  const auto listed = [&](const std::string& source, std::size_t entries) {
    if (entries > k_max_listed) facts.lists_cut.push_back({source, entries, k_max_listed});
    return std::min(entries, k_max_listed);
  };
  const auto prefix_of = [&](const std::string& interpreter) {
    // A venv's bin/python links to its base interpreter; the venv is the directory with pyvenv.cfg.
    const auto up = sys::dirname(sys::dirname(interpreter));
    if (exists(sys, up + "/pyvenv.cfg") || exists(sys, up + "/conda-meta")) return up;
    return sys::dirname(sys::dirname(sys.canonical(interpreter).value_or(interpreter)));
  };
  const auto home = sys.env("HOME").value_or("");
  const auto pyenv_root = sys.env("PYENV_ROOT").value_or(home + "/.pyenv");
  const auto path = sys.env("PATH").value_or("");
  for (const auto dir : util::split(path, ':')) {
    if (dir.empty()) continue;
    for (const char* name : {"python3", "python"}) {
      const auto p = std::string(dir) + "/" + name;
      if (sys.stat(p).type != sys::FileType::regular) continue;
      facts.path_python = p;
      if (std::string(dir).ends_with("/.pyenv/shims")) {
        // pyenv's shims are scripts; the version in effect names the environment.
        auto version = sys.env("PYENV_VERSION").value_or("");
        if (version.empty())
          if (const auto v = sys.read_file(pyenv_root + "/version", 4096)) version = std::string(util::trim(*v));
        version = version.substr(0, version.find(':'));
        if (!version.empty() && version != "system") {
          facts.path_python_env = pyenv_root + "/versions/" + version;
          cands.push_back(
              {facts.path_python_env, facts.path_python_env + "/bin/python3", "pyenv", "python3 on PATH (pyenv shim)"});
        }
      } else {
        facts.path_python_env = prefix_of(p);
        cands.push_back({facts.path_python_env, p, "path", "python3 on PATH"});
      }
      break;
    }
    if (!facts.path_python.empty()) break;
  }
  if (const auto v = sys.env("VIRTUAL_ENV")) cands.push_back({*v, *v + "/bin/python3", "venv", "VIRTUAL_ENV"});
  if (const auto c = sys.env("CONDA_PREFIX")) cands.push_back({*c, *c + "/bin/python3", "conda", "CONDA_PREFIX"});
  if (exists(sys, "/usr/bin/python3")) cands.push_back({"/usr", "/usr/bin/python3", "system", "system interpreter"});
  for (const auto& g : given) cands.push_back({prefix_of(g), g, "given", "--python"});
  if (const auto names = sys.list_dir(pyenv_root + "/versions")) {
    const auto n = listed(pyenv_root + "/versions", names->size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto prefix = pyenv_root + "/versions/" + (*names)[i];
      cands.push_back({prefix, prefix + "/bin/python3", "pyenv", "pyenv version"});
    }
  }
  // conda's own list of the environments it created.
  const auto environments_txt = home + "/.conda/environments.txt";
  if (const auto list = ctx.read_optional(environments_txt, 16 << 20)) {
    std::vector<std::string> envs;
    for (const auto line : util::lines(*list))
      if (const auto env = util::trim(line); !env.empty()) envs.emplace_back(env);
    const auto n = listed(environments_txt, envs.size());
    for (std::size_t i = 0; i < n; ++i)
      cands.push_back({envs[i], envs[i] + "/bin/python3", "conda", "~/.conda/environments.txt"});
  }
  for (const auto& base : {std::string("/opt/conda"), home + "/miniconda3", home + "/anaconda3", home + "/.conda"})
    if (const auto names = sys.list_dir(base + "/envs")) {
      const auto n = listed(base + "/envs", names->size());
      for (std::size_t i = 0; i < n; ++i) {
        const auto prefix = base + "/envs/" + (*names)[i];
        cands.push_back({prefix, prefix + "/bin/python3", "conda", "conda environment"});
      }
    }

  ld::Resolver resolver(sys, ld::discover_config(sys, sys.env("LD_LIBRARY_PATH").value_or("")));
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
    PythonEnv env;
    env.prefix = c.prefix;
    env.interpreter = exists(sys, c.interpreter) ? c.interpreter : "";
    env.kind = exists(sys, c.prefix + "/pyvenv.cfg")   ? "venv"
               : exists(sys, c.prefix + "/conda-meta") ? "conda"
                                                       : c.kind;
    if (c.prefix == "/usr") env.kind = "system";
    env.found_by.push_back(c.found_by);
    env.site_packages = sites_of(sys, c.prefix, env.kind, env.version);
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
      for (const auto& site : sites_of(sys, env.base_prefix, base_kind, version)) {
        if (std::find(env.site_packages.begin(), env.site_packages.end(), site) != env.site_packages.end()) continue;
        env.site_packages.push_back(site);
        frameworks_in(ctx, resolver, site, env.base_prefix, true, env);
      }
    }
    by_real.emplace(real, facts.envs.size());
    facts.envs.push_back(std::move(env));
  }
  return facts;
}

}  // namespace cudoctor::probe
