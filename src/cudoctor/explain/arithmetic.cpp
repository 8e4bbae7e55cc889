// Version arithmetic on what a log says, so that an answer states the numbers a user would
// otherwise work out from tables: "found version 11040" is CUDA 11.4, which R470 gives; a cu121
// wheel needs 525.60.13 or later.
#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>

#include "cudoctor/explain/explain.hpp"
#include "cudoctor/plan/plan.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::explain {

namespace {

// "121" of +cu121 as CUDA 12.1; "92" as 9.2.
std::optional<util::Version> cu_suffix(std::string_view digits) {
  if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
  return util::Version::parse(fmt::format("{}.{}", digits.substr(0, digits.size() - 1), digits.back()));
}

std::string branches_giving(const kb::KnowledgeBase& kb, const util::Version& cuda) {
  std::vector<std::string> names;
  for (const auto& b : kb.driver_branches())
    if (b.max_cuda == cuda) names.push_back(fmt::format("R{}", b.branch));
  std::reverse(names.begin(), names.end());
  return names.empty() ? "" : fmt::format(" ({} drivers give it)", fmt::join(names, ", "));
}

// What a driver for CUDA major.minor must be: through minor-version compatibility (wheels
// bring their own runtime) and natively.
std::string driver_needed(const kb::KnowledgeBase& kb, const util::Version& cuda) {
  std::string out;
  if (const auto floor = kb.minor_compat_floor(cuda.major()))
    out = fmt::format("a driver >= {} (CUDA {}.x minor-version compatibility)", floor->str(), cuda.major());
  if (const auto* t = kb.first_release_of(cuda))
    out += fmt::format("{}>= {} for CUDA {} natively", out.empty() ? "a driver " : "; ", kb::min_driver_text(*t),
                       cuda.str());
  return out;
}

// The PyTorch build the planner recommends (the one judgement plan and check share) for the
// GPUs and driver the log shows, as a sentence; "" when none runs or nothing is known.
std::string torch_build_for(const kb::KnowledgeBase& kb, const std::vector<util::Version>& ccs,
                            const std::optional<util::Version>& driver, const std::string& what) {
  if (ccs.empty() && !driver) return "";
  const auto b = plan::recommended(kb, "torch", ccs, driver);
  if (!b) return "";
  return fmt::format("PyTorch {} built for CUDA {} runs on {}{}{}", b->release, b->cuda.str(), what,
                     b->fit == plan::Fit::works_compat ? " (through minor-version compatibility)" : "",
                     b->install.empty() ? "" : ": " + b->install);
}

void add(std::vector<std::string>& out, std::string line) {
  if (!line.empty() && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
}

}  // namespace

std::vector<std::string> arithmetic(const Reading& r, const Library& lib, const kb::KnowledgeBase& kb) {
  std::vector<std::string> out;
  std::optional<util::Version> framework_cuda;
  std::string framework_text;
  for (const auto& f : r.facts)
    if (f.id == "torch-version.cu" && !framework_cuda) {
      framework_cuda = cu_suffix(f.value);
      framework_text =
          fmt::format("the log's PyTorch is built for CUDA {}", framework_cuda ? framework_cuda->str() : "?");
    }
  std::optional<util::Version> log_driver;  // the driver the log states (nvidia-smi, the kernel module)
  for (const auto& f : r.facts)
    if (f.kind == CaptureKind::driver_version && !log_driver) log_driver = util::Version::parse(f.value);
  for (const auto& f : r.facts)
    if (f.kind == CaptureKind::driver_version)
      if (const auto v = util::Version::parse(f.value))
        if (const auto max = kb.max_cuda_for_driver(*v))
          add(out, fmt::format("Driver {} (line {}) supports CUDA up to {}{}.", f.value, f.line, max->str(),
                               kb.driver_beyond_kb(*v) ? " at least (a branch newer than the knowledge base)" : ""));

  std::vector<std::string> gpus_named;
  for (const auto& f : r.facts)
    if (f.kind == CaptureKind::gpu_name &&
        std::find(gpus_named.begin(), gpus_named.end(), f.value) == gpus_named.end()) {
      gpus_named.push_back(f.value);
      const auto hits = kb.find_gpus(f.value);
      if (!hits.empty())
        add(out, fmt::format("{} (line {}) is compute capability {} ({}).", f.value, f.line, hits.front()->cc.str(),
                             hits.front()->architecture));
    }
  for (const auto& m : r.matches) {
    for (const auto& c : m.captures) {
      switch (c.kind) {
        case CaptureKind::driver_api: {
          const auto n = util::parse_uint(c.value);
          if (!n || *n < 1000 || *n > 99000) break;
          const auto cuda = util::Version::parse(util::cuda_version_string(static_cast<int>(*n)));
          if (!cuda) break;
          add(out, fmt::format("\"found version {}\" is the driver API version: CUDA {}, the newest CUDA this driver "
                               "supports{}.",
                               c.value, cuda->str(), branches_giving(kb, *cuda)));
          if (framework_cuda && *framework_cuda > *cuda)
            add(out, fmt::format("{}; it needs {}.", framework_text, driver_needed(kb, *framework_cuda)));
          // A driver that gives CUDA 11.4 is at least 11.4's minimum: what runs on that runs on it.
          if (const auto floor = kb.min_driver_for_cuda(*cuda))
            if (const auto t = torch_build_for(kb, {}, floor, "a driver that gives CUDA " + cuda->str()); !t.empty())
              add(out, "Instead, " + t + ".");
          break;
        }
        case CaptureKind::cuda_version: {
          const auto v = util::Version::parse(c.value);
          if (v && v->parts.size() >= 2)
            add(out, fmt::format("CUDA {} (line {}) needs {}.", c.value, m.line, driver_needed(kb, *v)));
          break;
        }
        case CaptureKind::driver_version: {
          const auto v = util::Version::parse(c.value);
          if (v && v->parts.size() >= 2)
            if (const auto max = kb.max_cuda_for_driver(*v))
              add(out, fmt::format("Driver {} (line {}) supports CUDA up to {}.", c.value, m.line, max->str()));
          break;
        }
        case CaptureKind::soname: {
          std::string base;
          int major = 0;
          if (!RE2::PartialMatch(c.value, R"((lib[A-Za-z_]+)\.so\.(\d+))", &base, &major)) break;
          for (const auto& s : lib.sonames)
            if (s.library == base && s.soname_major == major)
              add(out, fmt::format("{} (line {}) is CUDA {}'s: the program was built for CUDA {}.", c.value, m.line,
                                   s.cuda_major, s.cuda_major));
          if (base == "libcudnn") add(out, fmt::format("{} (line {}) is cuDNN {}.", c.value, m.line, major));
          break;
        }
        case CaptureKind::sm:
        case CaptureKind::compute_capability: {
          const auto digits = c.kind == CaptureKind::sm ? c.value : std::string();
          std::optional<util::Version> cc;
          if (c.kind == CaptureKind::sm && digits.size() >= 2)
            cc = util::Version::parse(fmt::format("{}.{}", digits.substr(0, digits.size() - 1), digits.back()));
          else
            cc = util::Version::parse(c.value);
          if (!cc) break;
          for (const auto& a : kb.architectures())
            for (const auto& x : a.ccs)
              if (x.cc == *cc)
                add(out, fmt::format("Compute capability {} (line {}) is {}: CUDA {} was the first to build for it{}.",
                                     cc->str(), m.line, a.name, x.first_cuda.str(),
                                     x.last_cuda ? fmt::format(", CUDA {} the last", x.last_cuda->str()) : ""));
          if (const auto t = torch_build_for(kb, {*cc}, log_driver,
                                             fmt::format("compute capability {}{}", cc->str(),
                                                         log_driver ? " with driver " + log_driver->str() : ""));
              !t.empty())
            add(out, t + ".");
          else if (!c.value.empty())
            add(out, fmt::format("No PyTorch build in the knowledge base runs compute capability {}{}.", cc->str(),
                                 log_driver ? " on driver " + log_driver->str() : ""));
          break;
        }
        case CaptureKind::xid: {
          const auto n = util::parse_uint(c.value);
          if (!n) break;
          const auto it = lib.xids.find(static_cast<int>(*n));
          if (it == lib.xids.end())
            add(out, fmt::format("Xid {} (line {}) is not in the knowledge base's Xid table.", c.value, m.line));
          else
            add(out, fmt::format("Xid {} (line {}) is {} ({} fault): {}", c.value, m.line, it->second.mnemonic,
                                 it->second.kind, it->second.action));
          break;
        }
        case CaptureKind::code: {
          const auto n = util::parse_int(c.value);
          if (!n) break;
          if (const auto* e = kb.cuda_error("runtime", static_cast<int>(*n)))
            add(out, fmt::format("CUDA error {} (line {}) is {}: {}.", c.value, m.line, e->name, e->meaning));
          break;
        }
        default:
          break;
      }
    }
  }
  return out;
}

}  // namespace cudoctor::explain
