// `cudoctor toolkits`: the toolkits and what selects one; 2 when the root cannot be used.
#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/plan/toolkit_selection.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"
#include "cudoctor/sys/root_sys.hpp"

namespace cudoctor::cli {

int run_toolkits(const Options& all) {
  const auto& o = all.common;
  const auto sys = sys::make_root_sys(o.root);
  const auto f = gather_toolkits(o, *sys);
  if (!f) return 2;
  if (o.effective_format() == "json") return emit(finished(o, render::json_text(nlohmann::json(*f))), 0);
  const auto selectors = plan::toolkit_selectors(*f, [&](const std::string& p) -> std::optional<std::string> {
    auto c = sys->canonical(p);
    if (!c) return std::nullopt;
    return std::move(c).value();
  });
  return emit(finished(o, render::toolkits_text(*f, selectors)), 0);
}

}  // namespace cudoctor::cli
