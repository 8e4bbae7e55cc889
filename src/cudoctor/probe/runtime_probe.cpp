#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/runtime/child.hpp"
#include "cudoctor/runtime/cuda_child.hpp"
#include "cudoctor/runtime/nvml_child.hpp"
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
std::string find_versioned(Context& ctx, const std::string& dir, const std::string& stem) {
  const auto& sys = ctx.sys();
  const auto names = ctx.list_optional(dir);
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
  if (const auto names = ctx.list_optional("/usr/local"))
    for (const auto& n : *names)
      if (n.starts_with("cuda")) roots.push_back("/usr/local/" + n);
  roots.emplace_back("/opt/cuda");
  std::vector<Candidate> out;
  const auto add = [&](const std::string& dir, const std::string& origin) {
    const auto lib = find_versioned(ctx, dir, "libcudart.so.");
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

// The runtimes to check: each framework's libcudart as L3 resolved it, then the toolkits',
// each real file once.
std::vector<Candidate> all_candidates(Context& ctx, const snapshot::Snapshot& snap) {
  const auto& sys = ctx.sys();
  std::vector<Candidate> candidates;
  for (const auto& env : snap.python.envs)
    for (const auto& fw : env.frameworks)
      for (const auto& l : fw.libraries) {
        if (!l.soname.starts_with("libcudart.so.") || l.path.empty()) continue;
        const auto real = sys.canonical(l.path).value_or(l.path);
        const bool seen = std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& c) {
          return sys.canonical(c.path).value_or(c.path) == real;
        });
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
  return candidates;
}

// L5 on every device, with the runtime best and the cuBLAS that goes with it (its
// framework's, else the one beside it).
void run_compute_check(Context& ctx, const snapshot::CudartFacts& best,
                       const std::map<std::string, std::string>& cublas_of, const std::string& host_libcuda,
                       snapshot::RuntimeFacts& rt) {
  const auto& sys = ctx.sys();
  const auto dir = sys::dirname(best.library);
  const auto cublas =
      cublas_of.count(best.library) ? cublas_of.at(best.library) : find_versioned(ctx, dir, "libcublas.so.");
  const auto cudart_host = sys.host_path(sys.canonical(best.library).value_or(best.library));
  const auto cublas_host = cublas.empty() ? std::string() : sys.host_path(sys.canonical(cublas).value_or(cublas));
  std::vector<runtime::ComputeJob> devices;
  for (const auto& d : rt.driver_api.devices) {
    const auto cc = util::split(d.compute_capability, '.');
    const int major = cc.size() == 2 ? static_cast<int>(util::parse_uint(cc[0]).value_or(0)) : 0;
    const int minor = cc.size() == 2 ? static_cast<int>(util::parse_uint(cc[1]).value_or(0)) : 0;
    devices.push_back({host_libcuda, cudart_host, cublas_host, d.index, major, minor});
  }
  // Every device at once, under --compute-timeout (cuBLAS loading and the GEMMs take
  // seconds on a healthy GPU).
  for (auto& check : runtime::run_compute(devices, {}, ctx.options().compute_timeout)) {
    check.cudart = best.library;
    check.cublas = cublas;
    rt.compute.push_back(std::move(check));
  }
}

}  // namespace

void probe_runtime(Context& ctx, snapshot::Snapshot& snap) {
  std::string nvml_host;
  snap.driver.nvml = nvml_to_run(ctx, snap.driver.libraries, nvml_host);
  snapshot::RuntimeFacts& rt = snap.runtime;
  const auto& sys = ctx.sys();
  rt.cuda_visible_devices = sys.env("CUDA_VISIBLE_DEVICES");
  if (!ctx.options().child_probes) {
    rt.not_run_reason = ctx.options().child_probes_off_reason;
    return;
  }
  const auto timeout = ctx.options().timeout;
  if (!ctx.options().context_probes_off_reason.empty()) {
    rt.not_run_reason = ctx.options().context_probes_off_reason;
    if (nvml_host.empty()) return;
    runtime::ChildSet nvml(std::vector<runtime::ChildFn>{[&] { return runtime::query_nvml(nvml_host); }}, timeout);
    const auto library = snap.driver.nvml.library;
    snap.driver.nvml = runtime::parse_reply<snapshot::NvmlFacts>(nvml.wait().front());
    snap.driver.nvml.library = library;
    return;
  }
  rt.ran = true;

  std::string libcuda;  // logical real path
  for (const auto& l : snap.driver.libraries)
    if (l.soname == "libcuda.so.1" && !l.path.empty()) libcuda = l.real_path;
  const auto host_libcuda = libcuda.empty() ? std::string() : sys.host_path(libcuda);
  const auto candidates = all_candidates(ctx, snap);

  // NVML, the driver API and every runtime do not depend on one another, and the
  // computation check depends only on the last two: NVML runs beside all of them, so a
  // library that hangs costs one --timeout, not one per probe.
  std::optional<runtime::ChildSet> nvml;
  if (!nvml_host.empty())
    nvml.emplace(std::vector<runtime::ChildFn>{[&] { return runtime::query_nvml(nvml_host); }}, timeout);
  std::vector<runtime::ChildFn> jobs;
  if (!host_libcuda.empty()) jobs.emplace_back([&] { return runtime::driver_api_child(host_libcuda); });
  std::map<std::string, std::string> cublas_of;  // runtime path -> its framework's cuBLAS
  for (const auto& c : candidates) {
    if (!c.cublas.empty()) cublas_of[c.path] = c.cublas;
    const auto host = sys.host_path(sys.canonical(c.path).value_or(c.path));
    jobs.emplace_back([&, host] { return runtime::cudart_child(host, host_libcuda); });
  }
  const auto runs = runtime::run_in_children(jobs, timeout);
  std::size_t next = 0;
  if (libcuda.empty()) {
    rt.driver_api.outcome.status = snapshot::ChildStatus::not_run;
    rt.driver_api.outcome.message = "no libcuda.so.1 found";
  } else {
    rt.driver_api = runtime::parse_reply<snapshot::DriverApiFacts>(runs[next++]);
    rt.driver_api.library = libcuda;
  }
  for (const auto& c : candidates) {
    auto f = runtime::parse_reply<snapshot::CudartFacts>(runs[next++]);
    f.library = c.path;
    f.origin = c.origin;
    f.driver_library = libcuda;
    rt.cudarts.push_back(std::move(f));
  }
  // On a GPU in EXCLUSIVE_PROCESS compute mode one process at a time may hold a context:
  // probes that met each other there (error 46, device unavailable) are asked again alone.
  constexpr int k_device_unavailable = 46;  // CUDA_ERROR_DEVICE_UNAVAILABLE, cudaErrorDevicesUnavailable
  const std::size_t first_cudart = host_libcuda.empty() ? 0 : 1;
  if (std::any_of(rt.driver_api.devices.begin(), rt.driver_api.devices.end(),
                  [](const snapshot::CudaDevice& d) { return d.context.code == k_device_unavailable; })) {
    rt.driver_api = runtime::parse_reply<snapshot::DriverApiFacts>(runtime::run_in_child(jobs.front(), timeout));
    rt.driver_api.library = libcuda;
  }
  for (std::size_t i = 0; i < rt.cudarts.size(); ++i) {
    auto& f = rt.cudarts[i];
    if (f.set_device.code != k_device_unavailable && f.device_count_call.code != k_device_unavailable) continue;
    auto again = runtime::parse_reply<snapshot::CudartFacts>(runtime::run_in_child(jobs[first_cudart + i], timeout));
    again.library = f.library;
    again.origin = f.origin;
    again.driver_library = f.driver_library;
    f = std::move(again);
  }

  // NVML's answer is collected once the rest is done (or has given up).
  const auto collect_nvml = [&] {
    if (!nvml) return;
    const auto library = snap.driver.nvml.library;
    snap.driver.nvml = runtime::parse_reply<snapshot::NvmlFacts>(nvml->wait().front());
    snap.driver.nvml.library = library;
  };
  // L5 on every device, with the newest runtime that works and the cuBLAS beside it.
  if (rt.driver_api.init.code != 0 || rt.driver_api.devices.empty()) return collect_nvml();
  const snapshot::CudartFacts* best = nullptr;
  for (const auto& c : rt.cudarts)
    if (c.device_count_call.code == 0 && c.device_count > 0 && (!best || c.runtime_version > best->runtime_version))
      best = &c;
  if (!best) return collect_nvml();
  run_compute_check(ctx, *best, cublas_of, host_libcuda, rt);
  collect_nvml();
}

}  // namespace cudoctor::probe
