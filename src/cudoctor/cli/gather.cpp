#include "cudoctor/cli/gather.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {
namespace {

probe::RunTimeOpens run_time_opens() {
  probe::RunTimeOpens out;
  for (const auto& r : kb::builtin().runtime_opens()) {
    if (!r.opener.empty()) out.by_library[r.opener].beside_opener = r.beside_opener;
    auto& list = r.framework.empty() ? out.by_library[r.opener].sonames
                                     : out.by_framework[r.framework + " " + std::to_string(r.cuda)];
    for (const auto& l : r.libraries) list.push_back(l.soname);
  }
  return out;
}

}  // namespace

std::optional<snapshot::Snapshot> gather_snapshot(const CommonOptions& o, const char* tool_version) {
  const auto sys = sys::make_root_sys(o.root);
  if (sys->stat("/").type != sys::FileType::directory) {
    fmt::print(stderr, "cudoctor: --root {}: not a directory\n", util::visible(o.root));
    return std::nullopt;
  }
  for (const auto& p : o.pythons) {
    const auto st = sys->stat(p);
    if (st.type != sys::FileType::regular) {
      fmt::print(stderr, "cudoctor: --python {}: {}\n", util::visible(p),
                 st.type == sys::FileType::missing
                     ? (st.error.empty() ? "no such file" : st.error)
                     : "not an interpreter (a " + std::string(sys::to_string(st.type)) + ")");
      return std::nullopt;
    }
  }
  if (o.deep && !sys->is_live()) {
    fmt::print(stderr,
               "cudoctor: --deep runs the environments' interpreters: it runs on this machine, not under --root\n");
    return std::nullopt;
  }
  if (o.deep && o.no_runtime) {
    fmt::print(stderr, "cudoctor: --deep loads the frameworks' CUDA libraries, which --no-runtime forbids\n");
    return std::nullopt;
  }
  probe::Options popts;
  popts.deep = o.deep;
  // A tree's libnvidia-ml, libcuda and libcudart are the tree's code: loaded only when asked.
  popts.child_probes = !o.no_runtime && (sys->is_live() || o.runtime);
  if (o.no_runtime)
    popts.child_probes_off_reason = "--no-runtime";
  else if (!popts.child_probes)
    popts.child_probes_off_reason =
        "--root without --runtime (the tree's vendor libraries are loaded only with --runtime)";
  if (o.passive && o.no_runtime) {
    fmt::print(stderr, "cudoctor: --passive asks NVML, which --no-runtime forbids: give one of them\n");
    return std::nullopt;
  }
  if (o.passive && o.deep) {
    fmt::print(stderr, "cudoctor: --deep loads the frameworks' CUDA libraries, which --passive forbids\n");
    return std::nullopt;
  }
  if (o.passive)
    popts.context_probes_off_reason = "--passive: NVML only, no CUDA context on GPUs that jobs may be using";
  popts.pythons = o.pythons;
  // Without child processes the knowledge base is parsed on a second thread while the probes
  // read the machine, and the probe waits for it where it needs the run-time model. With
  // them it is parsed where it is first needed: no other thread may be alive (even exiting)
  // when a child is forked, and the children take far longer than the parse anyway.
  popts.run_time_opens =
      std::async(popts.child_probes ? std::launch::deferred : std::launch::async | std::launch::deferred,
                 run_time_opens)
          .share();
  popts.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  popts.compute_timeout = std::chrono::milliseconds(static_cast<long>(o.compute_timeout_s * 1000));
  auto snap = probe::gather(*sys, popts);
  snap.tool_version = tool_version;
  snap.root = o.root;
  return snap;
}

std::optional<snapshot::ToolkitFacts> gather_toolkits(const CommonOptions& o, const sys::Sys& sys) {
  if (sys.stat("/").type != sys::FileType::directory) {
    fmt::print(stderr, "cudoctor: --root {}: not a directory\n", util::visible(o.root));
    return std::nullopt;
  }
  probe::Options popts;
  popts.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  probe::Context ctx(sys, popts);
  return probe::probe_toolkits(ctx);
}

std::string file_argument(const sys::Sys& sys, const std::string& given) {
  return (sys.is_live() && !given.empty() && given.front() != '/')
             ? std::filesystem::current_path().string() + "/" + given
             : given;
}

}  // namespace cudoctor::cli
