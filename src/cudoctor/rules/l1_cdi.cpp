// L1: a CDI specification generated for another driver. nvidia-ctk writes the driver's
// libraries into the spec by their versioned names; after a driver upgrade they are gone, and
// a container asking for nvidia.com/gpu fails with "error stat'ing file …" (crun, runc) until
// the spec is generated again (NVIDIA Container Toolkit, "Support for Container Device
// Interface": regenerate the specification after a driver upgrade).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {

void cdi_rule(const View& v, std::vector<Finding>& out) {
  for (const auto& spec : v.snap.driver.cdi_specs) {
    if (spec.libraries == 0) continue;
    std::vector<std::string> other;  // versions in the spec that are not the installed driver's
    for (const auto& ver : spec.driver_versions) {
      const auto parsed = util::Version::parse(ver);
      if (!v.driver || !parsed || *parsed != *v.driver) other.push_back(ver);
    }
    const bool stale_version = v.driver && !other.empty();
    if (!stale_version && spec.missing.empty()) continue;
    auto f = make_finding("cdi-spec-stale");
    const auto generated_for = fmt::format("{}", fmt::join(spec.driver_versions, ", "));
    f.title = v.driver ? fmt::format("{} was generated for driver {}, not the installed {}", spec.path, generated_for,
                                     v.driver->str())
                       : fmt::format("{} names driver libraries that are not on this machine", spec.path);
    f.detail = fmt::format(
        "The spec mounts {} versioned driver librar{} of {} into every container that asks for {}; {}. The container "
        "engine fails with \"error stat'ing file\" (or the container gets the old driver's libraries) until the spec "
        "is generated again for the installed driver.",
        spec.libraries, spec.libraries == 1 ? "y" : "ies", generated_for,
        spec.kind.empty() ? "a GPU" : spec.kind + "=…",
        spec.missing.empty() ? "the files are still here, but they are not the loaded driver's"
                             : fmt::format("{} of them {} no longer here", spec.missing.size(),
                                           spec.missing.size() == 1 ? "is" : "are"));
    f.evidence.push_back(
        fmt::format("{}: kind {}, {} driver libraries of {}", spec.path, spec.kind, spec.libraries, generated_for));
    for (const auto& m : spec.missing) f.evidence.push_back(fmt::format("{}: listed in {}, missing", m, spec.path));
    if (v.driver) f.evidence.push_back(fmt::format("installed driver: {} ({})", v.driver->str(), v.m.driver.source));
    const auto generate = fmt::format("nvidia-ctk cdi generate --output={}", spec.path);
    if (v.in_container)
      f.fix = {"On the host: " + generate + " (as root), after every driver upgrade."};
    else if (v.m.has_tool("nvidia-ctk"))
      f.fix = {"Generate the spec again for the installed driver (after every driver upgrade).",
               {fixes::as_root(v.m, generate)},
               {"nvidia-ctk cdi list"}};
    else
      f.fix = {
          fmt::format("Install the NVIDIA Container Toolkit (nvidia-ctk) and run {} as root, or remove {} if "
                      "nothing here uses CDI.",
                      generate, spec.path)};
    out.push_back(std::move(f));
  }
}

}  // namespace cudoctor::rules::l1
