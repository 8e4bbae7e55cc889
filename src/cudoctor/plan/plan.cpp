#include "cudoctor/plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cudoctor::plan {
namespace {

using util::Version;

// Why nothing can run on this GPU with this driver, or "" when the driver can run it.
std::string driver_vs_gpu(const Plan& p, const kb::KnowledgeBase& kb) {
  if (!p.in.driver || !p.in.cc) return "";
  return driver_vs_gpu_text(kb, *p.in.driver, *p.in.cc);
}

void plan_toolkits(Plan& p, const kb::KnowledgeBase& kb) {
  for (const auto& cuda : kb.cuda_versions()) {
    ToolkitLine t{cuda, Fit::works, "", compat::How::none};
    const auto* acc = p.in.cc ? kb.arch_cc(*p.in.cc) : nullptr;
    const bool jit = !p.in.driver || kb.driver_fit(*p.in.driver, cuda) == kb::DriverFit::native;
    std::string reach;  // how code it builds reaches the GPU, when not natively
    if (p.in.cc && acc) {
      const auto r = compat::runs_on(kb.toolkit_targets(cuda), *p.in.cc);
      t.how = r.how;
      if (!r.runs() || (r.how == compat::How::ptx_jit && !jit)) {
        t.fit = Fit::no;
        t.why =
            !r.runs()
                ? (cuda < acc->first_cuda
                       ? fmt::format("cannot compile for {} (first toolkit: {})", sm(*p.in.cc), acc->first_cuda.str())
                       : fmt::format("dropped {} (last toolkit: {})", sm(*p.in.cc), acc->last_cuda->str()))
                : fmt::format("reaches {} only through {} PTX, which this driver cannot JIT", sm(*p.in.cc),
                              r.via->name());
        p.toolkits.push_back(std::move(t));
        continue;
      }
      if (r.how == compat::How::compatible_cubin) {
        std::string older;  // every portable cubin of the GPU's major this toolkit builds
        for (const auto& x : kb.toolkit_targets(cuda))
          if (x.kind == compat::Target::Kind::cubin && x.variant == 0 && compat::target_fits(x, *p.in.cc))
            older += (older.empty() ? "" : "/") + x.name();
        reach = fmt::format("builds {} cubins, which run on {} (native {} from CUDA {})", older, sm(*p.in.cc),
                            sm(*p.in.cc), acc->first_cuda.str());
      } else if (r.how == compat::How::ptx_jit)
        reach = fmt::format("reaches {} only through {} PTX, JIT-compiled when a program loads (native from CUDA {})",
                            sm(*p.in.cc), r.via->name(), acc->first_cuda.str());
    }
    if (const auto lowest = kb.minor_compat_floor(cuda.major());
        p.gpu_last_branch && (lowest ? *lowest : *kb.min_driver_for_cuda(cuda)).major() > *p.gpu_last_branch) {
      t.fit = Fit::no;
      t.why =
          fmt::format("needs a driver newer than R{}, the last branch for {} GPUs", *p.gpu_last_branch, p.architecture);
    } else if (p.in.driver && !p.driver_runs_gpu) {
      t.fit = Fit::no;
      t.why = driver_vs_gpu(p, kb);
    } else if (p.in.driver) {
      switch (kb.driver_fit(*p.in.driver, cuda)) {
        case kb::DriverFit::native:
          break;
        case kb::DriverFit::minor_compat:
          t.fit = Fit::works_compat;
          t.why = "through minor-version compatibility: cubins run, PTX cannot be JIT-compiled";
          break;
        case kb::DriverFit::too_old: {
          t.fit = Fit::no;
          const auto floor = kb.minor_compat_floor(cuda.major());
          t.why = fmt::format("needs driver ≥ {}", (floor ? *floor : *kb.min_driver_for_cuda(cuda)).str());
          break;
        }
      }
    }
    if (t.fit != Fit::no && !reach.empty()) t.why = t.why.empty() ? reach : reach + "; " + t.why;
    // What the minimum driver rests on, when it is less than NVIDIA's own table.
    if (const auto* ga = kb.first_release_of(cuda); ga && (!ga->min_driver_exact || !ga->status.empty())) {
      const auto basis =
          !ga->min_driver_exact
              ? fmt::format("minimum driver: {}, exact minimum not established{}", ga->min_driver_linux.str(),
                            ga->status.empty() ? "" : " (" + ga->status + " sources)")
              : fmt::format("minimum driver {} from {} sources", ga->min_driver_linux.str(), ga->status);
      t.why = t.why.empty() ? basis : t.why + "; " + basis;
    }
    p.toolkits.push_back(std::move(t));
  }
}

// A build whose arch list is not published borrows the list of the nearest release of the
// same framework built with the same CUDA (else the same CUDA major): frameworks change
// their lists rarely, and always with a new CUDA. Returns the stand-in and its label.
std::pair<const kb::FrameworkVariant*, std::string> stand_in(const kb::Framework& f, const kb::FrameworkRelease& r,
                                                             const kb::FrameworkVariant& v) {
  std::size_t here = 0;
  while (&f.releases[here] != &r) ++here;
  for (const bool same_minor : {true, false}) {
    const kb::FrameworkVariant* best = nullptr;
    std::string label;
    std::size_t best_distance = 0;
    for (std::size_t i = 0; i < f.releases.size(); ++i)
      for (const auto& o : f.releases[i].variants) {
        if (!o.archs || o.cuda.major() != v.cuda.major() || (same_minor && o.cuda.minor() != v.cuda.minor())) continue;
        const auto distance = i > here ? i - here : here - i;
        if (!best || distance < best_distance) {
          best = &o;
          best_distance = distance;
          label = fmt::format("{} {} CUDA {}", f.display, f.releases[i].version, o.cuda.str());
        }
      }
    if (best) return {best, label};
  }
  return {nullptr, ""};
}

void plan_build(Plan& p, const kb::KnowledgeBase& kb, const kb::Framework& f, const kb::FrameworkRelease& r,
                const kb::FrameworkVariant& v) {
  BuildLine b;
  b.framework = f.name;
  b.display = f.display;
  b.release = r.version;
  b.cuda = v.cuda;
  b.install = v.install;
  b.arch_unverified = !v.arch_status.empty();
  b.status = r.status;
  auto kernels = kb::kernels(v);
  if (p.in.cc && !kernels) {
    const auto [other, label] = stand_in(f, r, v);
    if (other) {
      kernels = kb::kernels(*other);
      b.arch_inferred_from = label;
    }
  }
  const auto fit = fit_build(kb, Machine{p.in.cc, p.in.driver, false}, v.cuda, kernels, v.cuda_max);
  b.fit = fit.fit;
  b.why = fit.why;
  b.unlock_driver = fit.unlock_driver;
  b.arch_unknown = fit.kernels_unknown;
  b.why_no_toolkit = fit.toolkit_bound && fit.stop == Stop::kernels;
  if (fit.kernels) {
    b.ptx_only = fit.kernels->how == compat::How::ptx_jit;
    b.runs_via = fit.kernels->describe();
    b.same_major_cubin = fit.kernels->how == compat::How::compatible_cubin && fit.kernels->via;
  }
  if (fit.stop == Stop::kernels && !b.arch_inferred_from.empty())
    b.why = fmt::format("no kernels for {} (as {}, whose list is published)", sm(*p.in.cc), b.arch_inferred_from);
  // A release with no wheel for this Python cannot be installed into it, whatever the GPU.
  if (p.in.python && kb::supports_python(r, *p.in.python) == false) {
    b.fit = Fit::no;
    b.no_wheel_for_python = true;
    b.unlock_driver.reset();
    b.why = fmt::format("no wheel for Python {}.{} (wheels for {}–{})", p.in.python->major(), p.in.python->minor(),
                        r.python.front(), r.python.back());
  }
  // A planned or withdrawn release is never recommended, whatever it would run on.
  if (!kb::recommendable(r)) {
    b.fit = Fit::no;
    b.unlock_driver.reset();
    b.why = r.status == "planned" ? fmt::format("planned, not released by {}{}",
                                                p.kb_date.empty() ? "the knowledge base's date" : p.kb_date,
                                                r.date.empty() ? "" : " (announced for " + r.date + ")")
                                  : "withdrawn" + (r.note.empty() ? std::string() : ": " + r.note);
  }
  // A GPU the driver cannot run is the driver's to fix; a legacy GPU's branch is final.
  if (fit.stop == Stop::driver_vs_gpu && p.gpu_last_branch && p.in.driver->major() > *p.gpu_last_branch)
    b.unlock_driver.reset();
  p.builds.push_back(std::move(b));
}

std::string release_range(std::vector<std::string> releases) {
  if (releases.size() == 1) return releases.front();
  return releases.back() + "–" + releases.front();  // newest first in the list
}

void plan_unlocks(Plan& p) {
  // The builds that only the driver stops, grouped by the driver they need, then by CUDA.
  std::map<std::string, Version> drivers;
  std::map<std::string, std::map<std::string, std::map<std::string, std::vector<std::string>>>> groups;
  for (const auto& b : p.builds) {
    if (!b.unlock_driver) continue;
    const auto d = b.unlock_driver->str();
    drivers[d] = *b.unlock_driver;
    const auto label = b.framework == "torch" ? fmt::format("cu{}{}", b.cuda.major(), b.cuda.minor()) : "";
    groups[d][b.cuda.str()][b.display + (label.empty() ? "" : "|" + label)].push_back(b.release);
  }
  for (const auto& [d, by_cuda] : groups) {
    std::string what;
    for (auto it = by_cuda.rbegin(); it != by_cuda.rend(); ++it) {
      std::string builds;
      for (const auto& [key, releases] : it->second) {
        const auto bar = key.find('|');
        const auto name = key.substr(0, bar);
        const auto tag = bar == std::string::npos ? "" : " " + key.substr(bar + 1);
        builds += (builds.empty() ? "" : ", ") + name + " " + release_range(releases) + tag;
      }
      what += fmt::format("{}CUDA {} builds ({})", what.empty() ? "" : "; ", it->first, builds);
    }
    if (p.gpu_min_driver && drivers[d] == *p.gpu_min_driver && p.in.cc)
      what += fmt::format(", which {} needs", sm(*p.in.cc));
    p.unlocks.push_back({drivers[d], what});
  }
  std::sort(p.unlocks.begin(), p.unlocks.end(), [](const Unlock& a, const Unlock& b) { return a.driver < b.driver; });
}

}  // namespace

Plan make_plan(const Inputs& in, const kb::KnowledgeBase& kb) {
  Plan p;
  p.in = in;
  if (in.cc) {
    if (const auto* a = kb.architecture_of(*in.cc)) {
      p.architecture = a->name;
      p.gpu_last_branch = a->last_driver_branch;
    }
    p.gpu_min_driver = kb.min_driver_for_cc(*in.cc);
    if (p.gpu_last_branch)
      for (const auto& b : kb.driver_branches())
        if (b.branch == *p.gpu_last_branch)
          p.notes.push_back(
              fmt::format("{} GPUs run only on drivers up to the R{} branch, which supports CUDA ≤ {} natively{}.",
                          p.architecture, b.branch, b.max_cuda.str(),
                          kb.minor_compat_floor(b.max_cuda.major())
                              ? fmt::format(" and {}.x through minor-version compatibility", b.max_cuda.major())
                              : ""));
    if (p.architecture.empty())
      p.notes.push_back(fmt::format("compute capability {} is not in the knowledge base", in.cc->str()));
  }
  p.kb_date = kb.date();
  if (in.driver) {
    if (kb.driver_beyond_kb(*in.driver))
      p.driver_cuda_at_least = kb.max_cuda_for_driver(*in.driver);
    else
      p.driver_max_cuda = kb.max_cuda_for_driver(*in.driver);
    p.driver_runs_gpu = driver_vs_gpu(p, kb).empty();
  }
  if (in.toolkits) plan_toolkits(p, kb);
  for (const auto& f : kb.frameworks()) {
    if (!in.framework.empty() && f.name != in.framework) continue;
    // "2.5" selects 2.5 and its patch releases; pip's "2.5.1" selects the 2.5 row; "1.22"
    // the record that stands for it (onnxruntime 1.19–1.26), as check finds it installed.
    const auto wanted = util::Version::parse(in.framework_version);
    const auto* record = wanted ? kb.release_of(f, *wanted) : nullptr;
    for (const auto& r : f.releases) {
      if (!in.framework_version.empty() && r.version != in.framework_version &&
          !r.version.starts_with(in.framework_version + ".") && !in.framework_version.starts_with(r.version + ".") &&
          &r != record)
        continue;
      for (const auto& v : r.variants) plan_build(p, kb, f, r, v);
    }
  }
  plan_unlocks(p);
  // Counted by release, as `plan` shows them: a release runs when one of its variants does.
  // Its variants come newest CUDA first, so the first of the best fit is the one to show.
  std::size_t releases = 0, works = 0;
  const auto rank = [](Fit f) { return f == Fit::works ? 2 : f == Fit::works_compat ? 1 : 0; };
  for (std::size_t i = 0; i < p.builds.size();) {
    std::size_t j = i, best = i;
    for (; j < p.builds.size() && p.builds[j].framework == p.builds[i].framework &&
           p.builds[j].release == p.builds[i].release;
         ++j)
      if (rank(p.builds[j].fit) > rank(p.builds[best].fit)) best = j;
    p.builds[best].best_of_release = true;
    // A planned or withdrawn release is shown, but is not one that could run.
    const auto& status = p.builds[best].status;
    if (status != "planned" && status != "withdrawn") ++releases;
    if (p.builds[best].fit != Fit::no) ++works;
    i = j;
  }
  // "here" only for what the machine itself showed; a GPU or driver given by flags is hypothetical.
  const bool from_machine = !in.gpu_source.starts_with("--") && in.driver_source != "--driver" &&
                            (in.cc || in.driver) && (!in.cc || !in.gpu_source.empty());
  const std::string where = from_machine         ? "here"
                            : in.cc && in.driver ? "on this GPU and driver"
                            : in.cc              ? "on this GPU"
                                                 : "on this driver";
  if (!p.driver_runs_gpu)
    p.headline = fmt::format("No build runs: {}.", driver_vs_gpu(p, kb));
  else if (works == 0)
    p.headline = p.builds.empty() ? "No framework build matches the selection."
                                  : fmt::format("No framework release in the knowledge base runs {}.", where);
  else
    p.headline = fmt::format("{} of {} framework releases have a build that runs {}.", works, releases, where);
  return p;
}

bool runs_any(const Plan& p) {
  for (const auto& b : p.builds)
    if (b.fit != Fit::no) return true;
  return false;
}

const BuildLine* recommended(const Plan& p) {
  for (const auto want : {Fit::works, Fit::works_compat})
    for (const auto& b : p.builds)
      if (b.fit == want) return &b;
  return nullptr;
}

std::optional<BuildLine> recommended(const kb::KnowledgeBase& kb, const std::string& framework,
                                     const std::vector<util::Version>& ccs, const std::optional<util::Version>& driver,
                                     const std::optional<util::Version>& python) {
  std::vector<Plan> plans;
  Inputs in;
  in.framework = framework;
  in.driver = driver;
  in.python = python;
  in.toolkits = false;
  if (ccs.empty()) plans.push_back(make_plan(in, kb));
  for (const auto& cc : ccs) {
    in.cc = cc;
    plans.push_back(make_plan(in, kb));
  }
  const auto runs_everywhere = [&](const BuildLine& b) {
    for (std::size_t i = 1; i < plans.size(); ++i) {
      bool ok = false;
      for (const auto& o : plans[i].builds) ok = ok || (o.release == b.release && o.cuda == b.cuda && o.fit != Fit::no);
      if (!ok) return false;
    }
    return true;
  };
  for (const auto want : {Fit::works, Fit::works_compat})
    for (const auto& b : plans.front().builds)
      if (b.fit == want && runs_everywhere(b)) return b;
  return std::nullopt;
}

}  // namespace cudoctor::plan
