#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {
namespace {

using plan::Fit;
// The GPU name and its source come from the machine or the command line, the rest from the
// knowledge base, which --kb may replace: every string is escaped.
using util::visible;

const char* mark(Fit f) {
  return f == Fit::works ? "✓" : f == Fit::works_compat ? "~" : "✗";
}
const char* colour(Fit f) {
  return f == Fit::works ? "32" : f == Fit::works_compat ? "33" : "31";
}
std::string fit_name(Fit f) {
  return f == Fit::works ? "works" : f == Fit::works_compat ? "works_compat" : "no";
}

std::string paint(bool on, const char* code, const std::string& s) {
  return on ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
}

std::string flags(const plan::BuildLine& b) {
  std::string s;
  if (b.ptx_only) s += " (through PTX JIT)";
  if (b.same_major_cubin && b.fit != Fit::no) s += " (runs through its " + b.runs_via + "s)";
  if (b.arch_unknown) s += " (arch list not published)";
  if (!b.arch_inferred_from.empty() && b.fit != Fit::no) s += " (archs as " + visible(b.arch_inferred_from) + ")";
  if (b.arch_unverified) s += " (arch list unverified)";
  if (b.status == "secondary" && b.fit != Fit::no) s += " (release on secondary sources)";
  if (b.status == "unverified" && b.fit != Fit::no) s += " (release unverified)";
  return s;
}

std::string variant_tag(const plan::BuildLine& b) {
  return b.framework == "torch" ? fmt::format("cu{}{}", b.cuda.major(), b.cuda.minor()) : "CUDA " + b.cuda.str();
}

}  // namespace

std::string plan_text(const plan::Plan& p, const Options& o, bool all) {
  const bool c = o.color;
  std::string out = paint(c, "1", "cudoctor plan");
  const auto& in = p.in;
  std::vector<std::string> head;
  if (!in.gpu.empty())
    head.push_back(
        fmt::format("GPU {}{}", visible(in.gpu), in.gpu_source.empty() ? "" : " (" + visible(in.gpu_source) + ")"));
  if (in.cc)
    head.push_back(fmt::format("compute capability {} ({}{})", in.cc->str(),
                               p.architecture.empty() ? "" : visible(p.architecture) + ", ", plan::sm(*in.cc)));
  if (in.driver)
    head.push_back(fmt::format("driver {}{}", in.driver->str(),
                               in.driver_source.empty() ? "" : " (" + visible(in.driver_source) + ")"));
  for (const auto& h : head) out += "\n  " + h;
  out += "\n";
  if (in.driver || in.cc) out += "\n";
  if (in.driver && p.driver_max_cuda)
    out += wrap(fmt::format("Driver {} supports CUDA ≤ {} natively{}.", in.driver->str(), p.driver_max_cuda->str(),
                            p.driver_max_cuda->major() >= 11
                                ? fmt::format(", and every {}.x runtime through minor-version compatibility",
                                              p.driver_max_cuda->major())
                                : ""),
                o.width, "") +
           "\n";
  if (in.cc && p.gpu_min_driver)
    out +=
        wrap(fmt::format("A {} GPU needs a driver ≥ {}{}.", plan::sm(*in.cc), p.gpu_min_driver->str(),
                         p.gpu_last_branch ? fmt::format(" and no newer than the R{} branch", *p.gpu_last_branch) : ""),
             o.width, "") +
        "\n";
  if (in.driver && p.driver_cuda_at_least)
    out += wrap(fmt::format("Driver {} is newer than every branch in the knowledge base (compiled {}): it supports at "
                            "least CUDA {} natively; newer CUDA it may support is not known.",
                            in.driver->str(), p.kb_date.empty() ? "undated" : visible(p.kb_date),
                            p.driver_cuda_at_least->str()),
                o.width, "") +
           "\n";
  for (const auto& n : p.notes) out += wrap(visible(n), o.width, "") + "\n";

  out += "\n" + paint(c, "1", "CUDA toolkits") + "\n";
  for (std::size_t i = 0; i < p.toolkits.size();) {
    std::size_t j = i;
    std::string versions;
    while (j < p.toolkits.size() && p.toolkits[j].fit == p.toolkits[i].fit && p.toolkits[j].why == p.toolkits[i].why)
      versions += (versions.empty() ? "" : ", ") + p.toolkits[j++].cuda.str();
    out += fmt::format(
        "  {} {}{}\n", paint(c, colour(p.toolkits[i].fit), mark(p.toolkits[i].fit)), versions,
        p.toolkits[i].why.empty() ? "" : "\n      " + wrap(visible(p.toolkits[i].why), o.width - 6, "      "));
    i = j;
  }

  std::string current;
  for (std::size_t i = 0; i < p.builds.size();) {
    const auto& first = p.builds[i];
    if (first.display != current) {
      current = first.display;
      out += "\n" + paint(c, "1", visible(current)) + "\n";
    }
    std::vector<const plan::BuildLine*> shown;
    std::size_t j = i;
    for (; j < p.builds.size() && p.builds[j].display == first.display && p.builds[j].release == first.release; ++j)
      if (all || p.builds[j].best_of_release) shown.push_back(&p.builds[j]);
    i = j;
    for (const auto* b : shown) {
      // The install command alone on its own line, so that it can be pasted; notes after it.
      const auto notes = flags(*b);
      out += fmt::format("  {} {:<13} {}{}\n", paint(c, colour(b->fit), mark(b->fit)), visible(b->release),
                         variant_tag(*b), b->fit == Fit::no ? "  " + visible(b->why) + notes : notes);
      if (b->fit == Fit::no) continue;
      out += "      $ " + visible(b->install) + "\n";
      if (b->fit == Fit::works_compat) out += "      " + wrap(visible(b->why), o.width - 6, "      ") + "\n";
    }
  }
  if (!p.unlocks.empty()) {
    out += "\n" + paint(c, "1", "Upgrades") + "\n";
    for (const auto& u : p.unlocks)
      out += "  " + wrap(fmt::format("driver ≥ {} unlocks {}", u.driver.str(), visible(u.what)), o.width - 2, "    ") +
             "\n";
  }
  out += "\n" + paint(c, p.headline.starts_with("No") ? "31;1" : "32", visible(p.headline)) + "\n";
  out += paint(c, "2", "✓ runs natively · ~ runs through minor-version compatibility · ✗ does not run") + "\n";
  return out;
}

std::string plan_json(const plan::Plan& p) {
  nlohmann::json j;
  const auto ver = [](const std::optional<util::Version>& v) {
    return v ? nlohmann::json(v->str()) : nlohmann::json(nullptr);
  };
  j["inputs"] = {{"gpu", p.in.gpu},
                 {"gpu_source", p.in.gpu_source},
                 {"cc", ver(p.in.cc)},
                 {"driver", ver(p.in.driver)},
                 {"driver_source", p.in.driver_source},
                 {"framework", p.in.framework},
                 {"framework_version", p.in.framework_version}};
  j["architecture"] = p.architecture;
  j["gpu_min_driver"] = ver(p.gpu_min_driver);
  j["gpu_last_driver_branch"] = p.gpu_last_branch ? nlohmann::json(*p.gpu_last_branch) : nlohmann::json(nullptr);
  j["driver_max_cuda"] = ver(p.driver_max_cuda);
  j["driver_cuda_at_least"] = ver(p.driver_cuda_at_least);
  j["kb_date"] = p.kb_date;
  j["driver_runs_gpu"] = p.driver_runs_gpu;
  j["headline"] = p.headline;
  j["notes"] = p.notes;
  auto& tk = j["toolkits"] = nlohmann::json::array();
  for (const auto& t : p.toolkits) tk.push_back({{"cuda", t.cuda.str()}, {"fit", fit_name(t.fit)}, {"why", t.why}});
  auto& builds = j["builds"] = nlohmann::json::array();
  for (const auto& b : p.builds)
    builds.push_back({{"framework", b.framework},
                      {"release", b.release},
                      {"cuda", b.cuda.str()},
                      {"fit", fit_name(b.fit)},
                      {"why", b.why},
                      {"install", b.install},
                      {"ptx_only", b.ptx_only},
                      {"runs_via", b.runs_via},
                      {"arch_unknown", b.arch_unknown},
                      {"arch_unverified", b.arch_unverified},
                      {"arch_inferred_from", b.arch_inferred_from},
                      {"status", b.status.empty() ? "released" : b.status},
                      {"unlock_driver", ver(b.unlock_driver)}});
  auto& un = j["unlocks"] = nlohmann::json::array();
  for (const auto& u : p.unlocks) un.push_back({{"driver", u.driver.str()}, {"what", u.what}});
  return json_text(j);
}

}  // namespace cudoctor::render
