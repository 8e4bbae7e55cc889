#include "cudoctor/probe/framework_detect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "cudoctor/probe/framework_libraries.hpp"
#include "cudoctor/probe/python_env.hpp"
#include "cudoctor/probe/version_file.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

using snapshot::Framework;

struct Dist {
  std::string name;     // as the dist-info directory spells it: "torch", "cupy_cuda12x"
  std::string version;  // "2.5.1"
};

// One site-packages directory, as the parsers see it.
struct Site {
  Context& ctx;
  const std::string& dir;
  const std::vector<Dist>& dists;

  bool exists(const std::string& rel) const { return ctx.sys().stat(dir + "/" + rel).type != sys::FileType::missing; }
  // The first of the paths under dir that exists, as a full path; "" none.
  std::string first_existing(std::initializer_list<const char*> rels) const {
    for (const char* r : rels)
      if (exists(r)) return dir + "/" + r;
    return "";
  }
  // The first distribution whose lowered name is one of names.
  Dist dist(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      for (const auto& d : dists)
        if (util::to_lower(d.name) == n) return d;
    return {};
  }
};

// dist-info and egg-info directories: torch-2.5.1.dist-info -> {"torch", "2.5.1"}.
std::vector<Dist> dists_in(Context& ctx, const std::string& site) {
  std::vector<Dist> out;
  if (const auto names = ctx.list_optional(site))
    for (const auto& n : *names)
      for (const char* ext : {".dist-info", ".egg-info"})
        if (n.ends_with(ext)) {
          const auto stem = n.substr(0, n.size() - std::string_view(ext).size());
          const auto dash = stem.find('-');
          if (dash != std::string::npos) out.push_back({stem.substr(0, dash), stem.substr(dash + 1)});
        }
  return out;
}

// An assignment's value; "" when it is absent or None.
std::string value(const std::map<std::string, std::string>& a, const std::string& key) {
  const auto it = a.find(key);
  return it == a.end() || it->second == "None" ? "" : it->second;
}

// The nvidia-* requirements in a dist-info's METADATA: "nvidia-cudnn-cu12==9.1.0.70".
std::vector<std::string> requires_nvidia(Context& ctx, const std::string& site, const Dist& d) {
  std::vector<std::string> out;
  const auto meta = ctx.read_optional(fmt::format("{}/{}-{}.dist-info/METADATA", site, d.name, d.version), 4 << 20);
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

// A parser fills fw from the marker (the marker file's text, or for a wheel marker "") and
// returns the distribution it belongs to ({} when none), whose installer is looked up.
using Parse = Dist (*)(const Site& site, const std::string& text, const Dist& wheel, Framework& fw);

// PyTorch: torch/version.py, written by its build.
Dist parse_torch(const Site& site, const std::string& text, const Dist&, Framework& fw) {
  const auto a = version_file_assignments(text);
  fw.version = value(a, "__version__");
  fw.cuda = value(a, "cuda");
  fw.hip = value(a, "hip");
  const auto d = site.dist({"torch"});
  if (!d.name.empty()) fw.requires_nvidia = requires_nvidia(site.ctx, site.dir, d);
  if (!fw.cuda.empty())
    fw.gpu_library = site.first_existing(
        {"torch/lib/libtorch_cuda.so", "torch/lib/libtorch_cuda_cu.so", "torch/lib/libc10_cuda.so"});
  return d;
}

// TensorFlow: tensorflow/python/platform/build_info.py.
Dist parse_tensorflow(const Site& site, const std::string& text, const Dist&, Framework& fw) {
  const auto a = version_file_assignments(text);
  if (value(a, "is_cuda_build") == "True") fw.cuda = value(a, "cuda_version");
  fw.cudnn = value(a, "cudnn_version");
  if (value(a, "is_rocm_build") == "True") fw.hip = a.count("rocm_version") ? value(a, "rocm_version") : "yes";
  const auto d = site.dist({"tensorflow", "tensorflow_gpu", "tensorflow_cpu"});
  fw.version = d.version;
  if (!fw.cuda.empty()) fw.gpu_library = site.first_existing({"tensorflow/libtensorflow_framework.so.2"});
  return d;
}

// JAX: jaxlib's version.py, and the CUDA plugin package that makes it use a GPU.
Dist parse_jax(const Site& site, const std::string& text, const Dist&, Framework& fw) {
  const auto a = version_file_assignments(text);
  fw.version = a.count("_version") ? value(a, "_version") : value(a, "__version__");
  for (const char* major : {"13", "12"})
    if (const auto plugin = fmt::format("jax_plugins/xla_cuda{}/xla_cuda_plugin.so", major);
        fw.cuda.empty() && site.exists(plugin)) {
      fw.cuda = major;
      fw.gpu_library = site.dir + "/" + plugin;
    }
  // jax itself, and the plugin wheels: JAX checks them against jaxlib when it is imported.
  if (const auto jax = site.ctx.read_optional(site.dir + "/jax/version.py", 1 << 20)) {
    const auto j = version_file_assignments(*jax);
    const auto version = j.count("_version") ? value(j, "_version") : value(j, "__version__");
    if (!version.empty()) fw.companions.push_back({"jax", version, "jax/version.py"});
    fw.minimum_jaxlib = value(j, "_minimum_jaxlib_version");
  }
  for (const char* name : {"jax_cuda13_plugin", "jax_cuda13_pjrt", "jax_cuda12_plugin", "jax_cuda12_pjrt"})
    for (const auto& d : site.dists)
      if (util::to_lower(d.name) == name)  // wheels write dist-info names with underscores
        fw.companions.push_back({name, d.version, d.name + "-" + d.version + ".dist-info"});
  return site.dist({"jaxlib"});
}

// CuPy: its wheel is named for the CUDA major, cupy_cuda12x.
Dist parse_cupy(const Site& site, const std::string&, const Dist& wheel, Framework& fw) {
  fw.version = wheel.version;
  fw.cuda = util::to_lower(wheel.name).substr(9);  // "cupy_cuda12x" -> "12x" -> "12"
  if (!fw.cuda.empty() && fw.cuda.back() == 'x') fw.cuda.pop_back();
  fw.requires_nvidia = requires_nvidia(site.ctx, site.dir, wheel);
  return wheel;
}

// ONNX Runtime: the GPU wheel's CUDA provider. No file states the CUDA it was built for: the
// major is read from what the provider links (linked_cuda_major) once it is resolved.
Dist parse_onnxruntime(const Site& site, const std::string&, const Dist& wheel, Framework& fw) {
  fw.version = wheel.version;
  fw.gpu_library = site.first_existing({"onnxruntime/capi/libonnxruntime_providers_cuda.so"});
  return wheel;
}

// How a framework shows itself in site-packages.
struct Detector {
  const char* name;      // Framework::name
  const char* location;  // the package directory under site-packages
  // A file under site-packages its build writes, or "dist-info " and the lowered name of its
  // wheel (a trailing '*' takes every name that starts so).
  const char* marker;
  Parse parse;
  std::initializer_list<const char*> conda_names;  // its conda packages, for installer_of
};

// In report order. Wheel markers add one framework per matching distribution.
const Detector k_detectors[] = {
    {"torch", "torch", "torch/version.py", parse_torch, {"pytorch", "pytorch-gpu"}},
    {"tensorflow", "tensorflow", "tensorflow/python/platform/build_info.py", parse_tensorflow, {"tensorflow"}},
    {"jax", "jaxlib", "jaxlib/version.py", parse_jax, {"jaxlib", "jax"}},
    {"cupy", "cupy", "dist-info cupy_cuda*", parse_cupy, {"cupy"}},
    {"onnxruntime", "onnxruntime", "dist-info onnxruntime_gpu", parse_onnxruntime, {"onnxruntime"}},
};

bool wheel_matches(std::string_view pattern, const std::string& lowered) {
  if (pattern.ends_with('*')) return lowered.starts_with(pattern.substr(0, pattern.size() - 1));
  return lowered == pattern;
}

// Where the framework's facts were read, then resolved, and added to env.
void add(const Site& site, const Detector& d, const std::string& source, const std::string& text, const Dist& wheel,
         ld::Resolver& resolver, const std::string& owner, bool inherited, snapshot::PythonEnv& env) {
  if (inherited &&
      std::any_of(env.frameworks.begin(), env.frameworks.end(), [&](const Framework& f) { return f.name == d.name; }))
    return;
  Framework fw;
  fw.name = d.name;
  fw.location = site.dir + "/" + d.location;
  fw.source = source;
  const auto dist = d.parse(site, text, wheel, fw);
  fw.inherited = inherited;
  fw.installer = installer_of(site.ctx, site.dir, dist.name, dist.version, owner, d.conda_names);
  if (!fw.gpu_library.empty()) resolve_framework(site.ctx, resolver, site.dir, fw);
  // A GPU build whose CUDA no file names: the major it links, or unknown.
  if (!fw.gpu_library.empty() && fw.cuda.empty() && fw.hip.empty()) {
    fw.cuda = linked_cuda_major(fw);
    fw.cuda_unknown = fw.cuda.empty();
  }
  env.frameworks.push_back(std::move(fw));
}

}  // namespace

void frameworks_in(Context& ctx, ld::Resolver& resolver, const std::string& site, const std::string& owner,
                   bool inherited, snapshot::PythonEnv& env) {
  const auto dists = dists_in(ctx, site);
  for (const auto& d : dists)
    if (d.name.starts_with("nvidia_")) env.nvidia_packages.emplace_back(d.name, d.version);
  for (const auto& d : dists) {
    const auto name = util::to_lower(d.name);
    const auto dist_info = d.name + "-" + d.version + ".dist-info";
    if (name == "triton" || name == "pytorch_triton")
      env.libcuda_users.push_back({d.name, d.version, dist_info});
    else if (name == "bitsandbytes" && ctx.sys().exists(site + "/bitsandbytes/cuda_setup/main.py"))
      env.libcuda_users.push_back({d.name, d.version, "bitsandbytes/cuda_setup/main.py"});
  }
  const Site s{ctx, site, dists};
  constexpr std::string_view k_wheel = "dist-info ";
  for (const auto& d : k_detectors) {
    const std::string_view marker = d.marker;
    if (!marker.starts_with(k_wheel)) {
      if (const auto text = ctx.read_optional(site + "/" + d.marker, 64 * 1024))
        add(s, d, d.marker, *text, {}, resolver, owner, inherited, env);
      continue;
    }
    for (const auto& w : dists)
      if (wheel_matches(marker.substr(k_wheel.size()), util::to_lower(w.name)))
        add(s, d, "dist-info " + w.name, "", w, resolver, owner, inherited, env);
  }
}

}  // namespace cudoctor::probe
