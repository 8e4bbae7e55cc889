#include "cudoctor/plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cudoctor::plan {
namespace {

using util::Version;

std::string arch_list(const kb::FrameworkVariant& v) {
  std::string s;
  if (v.archs)
    for (const auto& a : *v.archs) s += (s.empty() ? "" : " ") + sm(a);
  if (v.ptx) s += (s.empty() ? "" : " ") + std::string("+PTX ") + sm(*v.ptx);
  return s;
}

// Why nothing can run on this GPU with this driver, or "" when the driver can run it.
std::string driver_vs_gpu(const Plan& p) {
  if (!p.in.driver) return "";
  if (p.gpu_min_driver && *p.in.driver < *p.gpu_min_driver)
    return fmt::format("driver {} is older than any that runs {} GPUs ({} needs ≥ {})", p.in.driver->str(),
                       p.architecture, sm(*p.in.cc), p.gpu_min_driver->str());
  if (p.gpu_last_branch && p.in.driver->major() > *p.gpu_last_branch)
    return fmt::format("driver {} no longer supports {} GPUs: R{} is the last branch that does", p.in.driver->str(),
                       p.architecture, *p.gpu_last_branch);
  return "";
}

void plan_toolkits(Plan& p, const kb::KnowledgeBase& kb) {
  for (const auto& cuda : kb.cuda_versions()) {
    ToolkitLine t{cuda, Fit::works, ""};
    const auto* acc = p.in.cc ? kb.arch_cc(*p.in.cc) : nullptr;
    if (p.in.cc && acc && !kb.toolkit_targets_cc(cuda, *p.in.cc)) {
      t.fit = Fit::no;
      t.why = cuda < acc->first_cuda ? fmt::format("cannot compile for {} (first toolkit: {})", sm(*p.in.cc), acc->first_cuda.str())
                                     : fmt::format("dropped {} (last toolkit: {})", sm(*p.in.cc), acc->last_cuda->str());
    } else if (const auto lowest = kb.minor_compat_floor(cuda.major());
               p.gpu_last_branch && (lowest ? *lowest : *kb.min_driver_for_cuda(cuda)).major() > *p.gpu_last_branch) {
      t.fit = Fit::no;
      t.why = fmt::format("needs a driver newer than R{}, the last branch for {} GPUs", *p.gpu_last_branch, p.architecture);
    } else if (p.in.driver && !p.driver_runs_gpu) {
      t.fit = Fit::no;
      t.why = driver_vs_gpu(p);
    } else if (p.in.driver) {
      switch (kb.driver_fit(*p.in.driver, cuda)) {
        case kb::DriverFit::native: break;
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
  BuildLine b{f.name, f.display, r.version, v.cuda, v.install, Fit::works, "", false, "", false, !v.arch_status.empty(), false, {}};
  std::optional<kb::KernelCoverage> cov;
  if (p.in.cc) {
    cov = kb::coverage(v, *p.in.cc);
    if (!cov) {
      const auto [other, label] = stand_in(f, r, v);
      if (other) {
        cov = kb::coverage(*other, *p.in.cc);
        b.arch_inferred_from = label;
      }
    }
    // A toolkit that cannot compile for this GPU cannot have put a cubin for it in the build;
    // nor PTX, when the GPU is older than the toolkit supports. A GPU newer than the
    // toolkit could only be reached by PTX JIT, which no framework relies on for it.
    if (const auto* acc = kb.arch_cc(*p.in.cc); acc && !kb.toolkit_targets_cc(v.cuda, *p.in.cc)) {
      if (!cov) b.why_no_toolkit = true;
      if (!cov || v.cuda > acc->first_cuda) cov = kb::KernelCoverage{false, false};
      else cov->cubin = false;
    }
    b.arch_unknown = !cov.has_value();
    if (cov && !cov->covered()) {
      b.fit = Fit::no;
      if (!b.arch_inferred_from.empty())
        b.why = fmt::format("no kernels for {} (as {}, whose list is published)", sm(*p.in.cc), b.arch_inferred_from);
      else if (b.why_no_toolkit)
        b.why = fmt::format("no kernels for {}: CUDA {} cannot compile for it", sm(*p.in.cc), v.cuda.str());
      else
        b.why = fmt::format("no kernels for {} (built for {})", sm(*p.in.cc), v.min_cc ? "≥ " + sm(*v.min_cc) : arch_list(v));
      return p.builds.push_back(std::move(b));
    }
    b.ptx_only = cov && cov->ptx;
  }
  const auto native = kb.min_driver_for_cuda(v.cuda);
  const auto floor = kb.minor_compat_floor(v.cuda.major());
  // What the driver must reach for this build: the GPU's own floor, then the runtime's
  // (native when only PTX covers the GPU: minor-version compatibility cannot JIT it).
  auto need = (b.ptx_only || !floor) ? *native : *floor;
  if (p.gpu_min_driver) need = std::max(need, *p.gpu_min_driver);
  if (p.gpu_last_branch && need.major() > *p.gpu_last_branch) {
    b.fit = Fit::no;
    b.why = fmt::format("needs driver ≥ {}, newer than R{}, the last branch for {} GPUs", need.str(), *p.gpu_last_branch,
                        p.architecture);
    return p.builds.push_back(std::move(b));
  }
  if (!p.in.driver) {
    b.why = fmt::format("needs driver ≥ {}", need.str());
    return p.builds.push_back(std::move(b));
  }
  if (!p.driver_runs_gpu) {
    b.fit = Fit::no;
    b.why = driver_vs_gpu(p);
    if (!(p.gpu_last_branch && p.in.driver->major() > *p.gpu_last_branch)) b.unlock_driver = need;
    return p.builds.push_back(std::move(b));
  }
  switch (kb.driver_fit(*p.in.driver, v.cuda)) {
    case kb::DriverFit::native: break;
    case kb::DriverFit::minor_compat:
      if (b.ptx_only) {
        b.fit = Fit::no;
        b.why = fmt::format("reaches {} only through PTX, which minor-version compatibility cannot JIT; needs driver ≥ {}",
                            sm(*p.in.cc), native->str());
        b.unlock_driver = *native;
      } else {
        b.fit = Fit::works_compat;
        b.why = fmt::format("through minor-version compatibility (driver ≥ {} for full support)", native->str());
      }
      break;
    case kb::DriverFit::too_old:
      b.fit = Fit::no;
      b.why = fmt::format("needs driver ≥ {}", need.str());
      b.unlock_driver = need;
      break;
  }
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

std::string sm(const util::Version& cc) { return fmt::format("sm_{}{}", cc.major(), cc.minor()); }

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
          p.notes.push_back(fmt::format("{} GPUs run only on drivers up to the R{} branch, which supports CUDA ≤ {} natively{}.",
                                        p.architecture, b.branch, b.max_cuda.str(),
                                        kb.minor_compat_floor(b.max_cuda.major())
                                            ? fmt::format(" and {}.x through minor-version compatibility", b.max_cuda.major())
                                            : ""));
    if (p.architecture.empty()) p.notes.push_back(fmt::format("compute capability {} is not in the knowledge base", in.cc->str()));
  }
  if (in.driver) {
    p.driver_max_cuda = kb.max_cuda_for_driver(*in.driver);
    p.driver_runs_gpu = driver_vs_gpu(p).empty();
  }
  plan_toolkits(p, kb);
  for (const auto& f : kb.frameworks()) {
    if (!in.framework.empty() && f.name != in.framework) continue;
    for (const auto& r : f.releases) {
      if (!in.framework_version.empty() && r.version != in.framework_version &&
          !r.version.starts_with(in.framework_version + "."))
        continue;
      for (const auto& v : r.variants) plan_build(p, kb, f, r, v);
    }
  }
  plan_unlocks(p);
  const auto works = std::count_if(p.builds.begin(), p.builds.end(), [](const auto& b) { return b.fit != Fit::no; });
  if (!p.driver_runs_gpu)
    p.headline = fmt::format("No build runs: {}.", driver_vs_gpu(p));
  else if (works == 0)
    p.headline = p.builds.empty() ? "No framework build matches the selection." : "No framework build in the knowledge base runs here.";
  else
    p.headline = fmt::format("{} of {} framework builds run here.", works, p.builds.size());
  return p;
}

}  // namespace cudoctor::plan
