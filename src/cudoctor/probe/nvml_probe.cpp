#include "cudoctor/probe/probes.hpp"
#include "cudoctor/runtime/nvml_child.hpp"

namespace cudoctor::probe {

snapshot::NvmlFacts probe_nvml(Context& ctx, const std::vector<snapshot::DriverLibrary>& libraries) {
  snapshot::NvmlFacts facts;
  facts.outcome.status = "not_run";
  const snapshot::DriverLibrary* lib = nullptr;
  for (const auto& l : libraries)
    if (l.soname == "libnvidia-ml.so.1") lib = &l;
  if (!lib || lib->path.empty()) {
    facts.outcome.message = "libnvidia-ml.so.1 not found";
    return facts;
  }
  if (!ctx.options().child_probes) {
    facts.library = lib->path;
    facts.outcome.message = "not run: " + ctx.options().child_probes_off_reason;
    return facts;
  }
  facts = runtime::probe_nvml(ctx.sys().host_path(lib->real_path), ctx.options().timeout);
  facts.library = lib->path;
  return facts;
}

}  // namespace cudoctor::probe
