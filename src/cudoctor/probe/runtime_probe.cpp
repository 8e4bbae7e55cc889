#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/runtime/cuda_child.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

// The runtimes checked: each framework's own libcudart, as L3 resolved it (what `import
// torch` loads), then those of the CUDA toolkits in their usual places.

namespace cudoctor::probe {
namespace {

struct Candidate {
  std::string path;  // logical, canonical
  std::string origin;
  std::string cublas;  // the cuBLAS that goes with it (the framework's), "" to look beside it
};

// The runtime library in a directory: libcudart.so.<digits...>, the shortest such name (the
// soname link or the file it names).
std::string find_versioned(const sys::Sys& sys, const std::string& dir, const std::string& stem) {
  const auto names = sys.list_dir(dir);
  if (!names) return "";
  std::string best;
  for (const auto& n : *names) {
    if (!n.starts_with(stem) || n.size() == stem.size()) continue;
    const auto rest = n.substr(stem.size());
    if (!std::all_of(rest.begin(), rest.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) continue;
    if (sys.stat(sys::join(dir, n)).type != sys::FileType::regular) continue;
    if (best.empty() || n.size() < best.size()) best = n;
  }
  return best.empty() ? "" : sys::join(dir, best);
}

std::vector<Candidate> runtime_candidates(Context& ctx, const std::string& arch) {
  const auto& sys = ctx.sys();
  std::vector<std::string> roots;
  if (const auto names = sys.list_dir("/usr/local"))
    for (const auto& n : *names)
      if (n.starts_with("cuda")) roots.push_back("/usr/local/" + n);
  roots.emplace_back("/opt/cuda");
  std::vector<Candidate> out;
  const auto add = [&](const std::string& dir, const std::string& origin) {
    const auto lib = find_versioned(sys, dir, "libcudart.so.");
    if (lib.empty()) return;
    // Named by where it really is: /usr/local/cuda/lib64 is /usr/local/cuda-13.0/lib.
    const auto real_dir = sys.canonical(dir).value_or(dir);
    const auto path = sys::join(real_dir, sys::basename(lib));
    const auto real = sys.canonical(lib).value_or(lib);
    for (const auto& c : out)
      if (sys.canonical(c.path).value_or(c.path) == real) return;
    out.push_back({path, origin, ""});
  };
  for (const auto& r : roots) {
    const auto real_root = sys.canonical(r).value_or(r);
    for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib", "/targets/sbsa-linux/lib"})
      add(r + sub, "toolkit " + real_root);
  }
  const auto triplet = arch == "aarch64" ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
  add(std::string("/usr/lib/") + triplet, "distribution package");
  return out;
}

}  // namespace

snapshot::RuntimeFacts probe_runtime(Context& ctx, const snapshot::Snapshot& snap) {
  snapshot::RuntimeFacts rt;
  const auto& sys = ctx.sys();
  rt.cuda_visible_devices = sys.env("CUDA_VISIBLE_DEVICES");
  if (!ctx.options().child_probes) {
    rt.not_run_reason = ctx.options().child_probes_off_reason;
    return rt;
  }
  rt.ran = true;
  const auto timeout = ctx.options().timeout;

  std::string libcuda;  // logical real path
  for (const auto& l : snap.driver.libraries)
    if (l.soname == "libcuda.so.1" && !l.path.empty()) libcuda = l.real_path;
  if (libcuda.empty()) {
    rt.driver_api.outcome.status = "not_run";
    rt.driver_api.outcome.message = "no libcuda.so.1 found";
  } else {
    rt.driver_api = runtime::probe_driver_api(sys.host_path(libcuda), timeout);
    rt.driver_api.library = libcuda;
  }
  const auto host_libcuda = libcuda.empty() ? std::string() : sys.host_path(libcuda);
  std::vector<Candidate> candidates;
  for (const auto& env : snap.python.envs)
    for (const auto& fw : env.frameworks)
      for (const auto& l : fw.libraries) {
        if (!l.soname.starts_with("libcudart.so.") || l.path.empty()) continue;
        const auto real = sys.canonical(l.path).value_or(l.path);
        const bool seen = std::any_of(candidates.begin(), candidates.end(),
                                      [&](const Candidate& c) { return sys.canonical(c.path).value_or(c.path) == real; });
        if (seen) continue;
        std::string cublas;
        for (const auto& b : fw.libraries)
          if (b.soname.starts_with("libcublas.so.") && !b.path.empty()) cublas = b.path;
        candidates.push_back({l.path, fmt::format("{} {} in {}", fw.name, fw.version, env.prefix), cublas});
      }
  for (auto& c : runtime_candidates(ctx, snap.host.arch)) {
    const auto real = sys.canonical(c.path).value_or(c.path);
    const bool seen = std::any_of(candidates.begin(), candidates.end(),
                                  [&](const Candidate& o) { return sys.canonical(o.path).value_or(o.path) == real; });
    if (!seen) candidates.push_back(std::move(c));
  }
  std::map<std::string, std::string> cublas_of;  // runtime path -> its framework's cuBLAS
  std::vector<std::string> hosts;
  for (const auto& c : candidates) {
    if (!c.cublas.empty()) cublas_of[c.path] = c.cublas;
    hosts.push_back(sys.host_path(sys.canonical(c.path).value_or(c.path)));
  }
  auto facts = runtime::probe_cudarts(hosts, host_libcuda, timeout);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto& f = facts[i];
    f.library = candidates[i].path;
    f.origin = candidates[i].origin;
    f.driver_library = libcuda;
    rt.cudarts.push_back(std::move(f));
  }

  // L5 on every device, with the newest runtime that works and the cuBLAS beside it.
  if (rt.driver_api.init.code != 0 || rt.driver_api.devices.empty()) return rt;
  const snapshot::CudartFacts* best = nullptr;
  for (const auto& c : rt.cudarts)
    if (c.device_count_call.code == 0 && c.device_count > 0 && (!best || c.runtime_version > best->runtime_version)) best = &c;
  if (!best) return rt;
  const auto dir = sys::dirname(best->library);
  const auto cublas = cublas_of.count(best->library) ? cublas_of.at(best->library) : find_versioned(sys, dir, "libcublas.so.");
  const auto cudart_host = sys.host_path(sys.canonical(best->library).value_or(best->library));
  const auto cublas_host = cublas.empty() ? std::string() : sys.host_path(sys.canonical(cublas).value_or(cublas));
  std::vector<runtime::ComputeJob> jobs;
  for (const auto& d : rt.driver_api.devices) {
    const auto cc = util::split(d.compute_capability, '.');
    const int major = cc.size() == 2 ? static_cast<int>(util::parse_uint(cc[0]).value_or(0)) : 0;
    const int minor = cc.size() == 2 ? static_cast<int>(util::parse_uint(cc[1]).value_or(0)) : 0;
    jobs.push_back({host_libcuda, cudart_host, cublas_host, d.index, major, minor});
  }
  // Every device at once, within the same --timeout as every other child probe.
  for (auto& check : runtime::run_compute(jobs, {}, timeout)) {
    check.cudart = best->library;
    check.cublas = cublas;
    rt.compute.push_back(std::move(check));
  }
  return rt;
}

}  // namespace cudoctor::probe
