// `cudoctor plan`: 0 when some build runs, 1 when none does, 2 on bad input.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/compat/binary.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/plan/framework_arg.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

using util::visible;

void add_plan_options(CLI::App& app, Options& o) {
  auto& po = o.plan;
  app.add_option("--gpu", po.gpu, "A GPU by name (\"RTX 4060 Laptop GPU\") or PCI id (10de:2684)")->type_name("NAME");
  app.add_option("--cc", po.cc, "A compute capability (8.9)")->type_name("X.Y");
  app.add_option("--driver", po.driver, "A driver version (535.104.05)")->type_name("VERSION");
  app.add_option("--framework", po.framework, "torch, tensorflow, jax, cupy or onnxruntime, optionally ==VERSION")
      ->type_name("NAME[==V]");
  app.add_flag("--all", po.all, "Every build of every release, not only the best of each");
}

int run_plan(const Options& all) {
  const auto& o = all.common;
  const auto& po = all.plan;
  const auto& kb = kb::builtin();
  plan::Inputs in;
  const bool given = !po.gpu.empty() || !po.cc.empty() || !po.driver.empty();
  if (!po.gpu.empty()) {
    const auto hits = kb.find_gpus(po.gpu);
    if (hits.empty()) {
      fmt::print(stderr,
                 "cudoctor plan: no GPU in the knowledge base matches '{}'; give its PCI id (10de:XXXX) or --cc X.Y\n",
                 visible(po.gpu));
      return 2;
    }
    in.gpu = hits.front()->name;
    in.gpu_source = "--gpu " + po.gpu;
    in.cc = hits.front()->cc;
  }
  if (!po.cc.empty()) {
    const auto cc = compat::parse_cc(po.cc);
    if (!cc) {
      fmt::print(stderr, "cudoctor plan: --cc {}: not a compute capability (like 8.9)\n", visible(po.cc));
      return 2;
    }
    in.cc = cc;
  }
  if (!po.driver.empty()) {
    const auto d = util::Version::parse(po.driver);
    if (!d) {
      fmt::print(stderr, "cudoctor plan: --driver {}: not a driver version (like 535.104.05)\n", visible(po.driver));
      return 2;
    }
    in.driver = d;
    in.driver_source = "--driver";
  }
  if (!given) {
    auto snap = gather_snapshot(o, CUDOCTOR_VERSION);
    if (!snap) return 2;
    in = plan::inputs_from_snapshot(*snap, kb);
    if (!in.cc && !in.driver) {
      fmt::print(
          stderr,
          "cudoctor plan: no NVIDIA GPU or driver found here; say which with --gpu NAME, --cc X.Y, --driver VERSION\n");
      return 2;
    }
  }
  if (!po.framework.empty()) {
    const auto fw = plan::parse_framework(po.framework, kb);
    if (!fw) {
      fmt::print(stderr, "cudoctor plan: {}\n", fw.error());
      return 2;
    }
    in.framework = fw->name;
    in.framework_version = fw->version;
  }
  const auto p = plan::make_plan(in, kb);
  const auto ropts = render_options(o);
  const auto out = o.effective_format() == "json" ? render::plan_json(p) : render::plan_text(p, ropts, po.all);
  const int rc = plan::runs_any(p) ? 0 : 1;
  return emit(finished(o, std::move(out)), rc);
}

}  // namespace cudoctor::cli
