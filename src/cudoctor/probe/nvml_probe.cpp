#include "cudoctor/probe/probes.hpp"

namespace cudoctor::probe {

snapshot::NvmlFacts nvml_to_run(Context& ctx, const std::vector<snapshot::DriverLibrary>& libraries,
                                std::string& host_library) {
  snapshot::NvmlFacts facts;
  facts.outcome.status = snapshot::ChildStatus::not_run;
  const snapshot::DriverLibrary* lib = nullptr;
  for (const auto& l : libraries)
    if (l.soname == "libnvidia-ml.so.1") lib = &l;
  if (!lib || lib->path.empty()) {
    facts.outcome.message = "libnvidia-ml.so.1 not found";
    return facts;
  }
  facts.library = lib->path;
  if (!ctx.options().child_probes) {
    facts.outcome.message = "not run: " + ctx.options().child_probes_off_reason;
    return facts;
  }
  host_library = ctx.sys().host_path(lib->real_path);
  return facts;
}

}  // namespace cudoctor::probe
