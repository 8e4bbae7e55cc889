#include <fmt/format.h>

#include "cudoctor/cli/check_command.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

using util::visible;

int run_plan(const CommonOptions& o, const PlanOptions& po, const char* tool_version) {
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
    const auto cc = util::Version::parse(po.cc);
    if (!cc || cc->parts.size() != 2) {
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
    auto snap = gather_snapshot(o, tool_version);
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
    const auto eq = po.framework.find("==");
    in.framework = po.framework.substr(0, eq);
    if (eq != std::string::npos) in.framework_version = po.framework.substr(eq + 2);
    if (in.framework == "pytorch") in.framework = "torch";
    if (!kb.framework(in.framework)) {
      fmt::print(stderr, "cudoctor plan: --framework {}: not one of torch, tensorflow, jax, cupy, onnxruntime\n",
                 visible(in.framework));
      return 2;
    }
  }
  const auto p = plan::make_plan(in, kb);
  render::Options ropts;
  ropts.color = o.effective_format() == "text" && use_color(o);
  const auto out = o.effective_format() == "json" ? render::plan_json(p) : render::plan_text(p, ropts, po.all);
  int rc = 1;
  for (const auto& b : p.builds)
    if (b.fit != plan::Fit::no) rc = 0;
  if (!o.redact) return emit(out, rc);
  const auto sys = sys::make_root_sys(o.root);
  return emit(redacted(o, *sys, out), rc);
}

}  // namespace cudoctor::cli
