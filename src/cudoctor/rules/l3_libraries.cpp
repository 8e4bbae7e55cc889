// L3: the libraries a framework loads: missing, lacking a symbol version, shadowed by another
// copy (older, newer or the same version as its own), or two CUDA runtimes in one process.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l3_view.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules::l3 {
namespace {

using snapshot::PythonEnv;

// The library's name as NVIDIA writes it, for titles (runtime_libraries.json's components);
// the soname when the knowledge base has none.
std::string library_name(const kb::KnowledgeBase& kb, const std::string& soname) {
  const auto* c = kb.component_of(soname);
  return c ? c->name : soname;
}

// The dist-info name prefix of the wheel that ships soname ("nvidia_cudnn_cu"), "" none.
std::string dist_info_prefix(const kb::KnowledgeBase& kb, const std::string& soname) {
  const auto* c = kb.component_of(soname);
  if (!c) return "";
  auto w = c->wheel;
  std::replace(w.begin(), w.end(), '-', '_');  // wheels write dist-info names with underscores
  return w;
}

// A version that says more than the soname's major: "9.1.0.70", not "9".
std::optional<util::Version> full_version(const std::string& text) {
  auto v = util::Version::parse(text);
  if (!v || v->parts.size() < 2) return std::nullopt;
  return v;
}

// The version of the copy a framework ships: its nvidia-* wheel's (the dist-info of the wheel
// for this soname whose major is the soname's), else the bundled file's own name. The second
// member says where it came from.
std::pair<std::optional<util::Version>, std::string> bundled_version(const kb::KnowledgeBase& kb, const PythonEnv& env,
                                                                     const snapshot::FrameworkLibrary& l) {
  const auto so = l.soname.find(".so.");
  const auto major = so == std::string::npos ? std::nullopt : util::Version::parse(l.soname.substr(so + 4));
  if (const auto wheel = dist_info_prefix(kb, l.soname);
      !wheel.empty() && l.bundled.find("/nvidia/") != std::string::npos)
    for (const auto& [name, version] : env.nvidia_packages)
      if (name.starts_with(wheel))
        if (const auto v = full_version(version); v && major && v->major() == major->major())
          return {v, fmt::format("{} {} (dist-info)", name, version)};
  const auto base = l.bundled.substr(l.bundled.rfind('/') + 1);
  if (const auto dot = base.find(".so."); dot != std::string::npos)
    if (const auto v = full_version(base.substr(dot + 4))) return {v, l.bundled};
  return {std::nullopt, ""};
}

// -1, 0, 1 as a is older, the same as or newer than b, compared on the parts both name
// (a file named 9.1.0 is the wheel 9.1.0.70).
int compare_common(const util::Version& a, const util::Version& b) {
  const auto n = std::min(a.parts.size(), b.parts.size());
  for (std::size_t i = 0; i < n; ++i)
    if (a.parts[i] != b.parts[i]) return a.parts[i] < b.parts[i] ? -1 : 1;
  return 0;
}

}  // namespace

std::vector<std::string> lib_evidence(const snapshot::Framework& f) {
  std::vector<std::string> ev;
  for (const auto& l : f.libraries)
    ev.push_back(fmt::format("{} -> {} ({}){}", l.soname, l.path, l.rule,
                             l.bundled.empty() || l.bundled == l.path ? "" : ", ships " + l.bundled));
  return ev;
}

// The knowledge base's install line for the installed release's build for its CUDA major
// ("pip install \"tensorflow[and-cuda]==2.15.*\""); "" when it has none.
std::string same_release_line(const FrameworkView& v) {
  const auto* kf = v.kb.framework(v.f.name);
  const auto installed = util::Version::parse(v.f.version.substr(0, v.f.version.find_first_not_of("0123456789.")));
  const auto cuda = util::Version::parse(v.f.cuda);
  if (!kf || !installed || !cuda) return "";
  const auto* rel = v.kb.release_of(*kf, *installed);
  if (!rel) return "";
  for (const auto& var : rel->variants)
    if (var.cuda.major() == cuda->major()) return var.install;
  return "";
}

// The library that opens soname at run time, as the probe found it; the GPU library when none.
std::string opener_of(const snapshot::Framework& f, const std::string& soname) {
  for (const auto& o : f.opened)
    if (o.soname == soname) return o.opener;
  return f.gpu_library;
}

// What a framework does when a library it opens at run time is missing and the GPU is not used.
std::string without_gpu_text(const FrameworkView& v, const std::vector<std::string>& missing) {
  const auto cudnn_part =
      std::all_of(missing.begin(), missing.end(), [](const std::string& m) { return m.starts_with("libcudnn_"); });
  if (cudnn_part)
    return "The import works and the GPU is seen, but cuDNN cannot load its own sub-libraries: the first "
           "convolution, RNN or attention that uses cuDNN fails (\"Could not load library …\", \"Unable to load any "
           "of {…}\").";
  if (v.f.name == "tensorflow")
    return "The import works, but TensorFlow logs \"Could not load dynamic library\" (\"Cannot dlopen some GPU "
           "libraries\") and runs on the CPU: tf.config.list_physical_devices('GPU') is empty.";
  if (v.f.name == "jax")
    return "The import works, but the CUDA plugin cannot start: JAX falls back to the CPU (jax.devices() lists "
           "no GPU) or raises when a GPU is asked for.";
  return "The import works, but the framework cannot use the GPU for what needs these libraries.";
}

// Libraries the framework opens at run time (not DT_NEEDED), in the knowledge base's model
// (runtime_libraries.json): those the GPU needs are errors, the others (needed_for) warnings.
void dlopened_missing_rule(const FrameworkView& v, const std::vector<std::string>& missing, std::vector<Finding>& out) {
  const auto& f = v.f;
  std::vector<std::string> needed, optional;
  for (const auto& m : missing) {
    const auto* rec = v.kb.runtime_library(m);
    (rec && !rec->needed_for.empty() ? optional : needed).push_back(m);
  }
  const auto line = same_release_line(v);
  const auto evidence = [&](const std::vector<std::string>& libs) {
    auto ev = v.base_ev;
    for (const auto& m : libs) {
      const auto* rec = v.kb.runtime_library(m);
      ev.push_back(
          fmt::format("{}: opened at run time by {}, not found (its RUNPATH, LD_LIBRARY_PATH, ld.so.cache, "
                      "the default path){}",
                      m, opener_of(f, m), rec && !rec->needed_for.empty() ? "; needed for " + rec->needed_for : ""));
    }
    return ev;
  };
  // The wheels that ship them, pinned as the framework's own metadata pins them.
  const auto wheels = [&](const std::vector<std::string>& libs) {
    std::vector<std::string> names;
    for (const auto& m : libs) {
      const auto* c = v.kb.component_of(m);
      const auto cuda = f.cuda.substr(0, f.cuda.find('.'));
      if (!c || c->wheel.empty() || cuda.empty()) continue;
      auto w = c->wheel + cuda;
      for (const auto& r : f.requires_nvidia)
        if (util::to_lower(r).starts_with(w)) w = r;
      w = fixes::shell_quote(w);  // "nvidia-nccl-cu12>=2.18" holds a redirection otherwise
      if (std::find(names.begin(), names.end(), w) == names.end()) names.push_back(w);
    }
    return names;
  };
  const auto fix_for = [&](const std::vector<std::string>& libs, Finding& x) {
    std::vector<std::string> cmds;
    std::string text;
    if (!line.empty() && f.name == "tensorflow") {
      cmds = fixes::pip_install(v.m, v.env, &v.f, line);
      text = install_text(v, "Reinstall this release with its CUDA wheels (the and-cuda extra)");
    } else if (const auto w = wheels(libs); !w.empty()) {
      cmds = fixes::pip_install(v.m, v.env, nullptr, "pip install " + fmt::format("{}", fmt::join(w, " ")));
      text = install_text(v, fmt::format("Install the wheel{} that ship{} {}", w.size() == 1 ? "" : "s",
                                         w.size() == 1 ? "s" : "", fmt::join(libs, ", ")));
    }
    if (cmds.empty())
      text =
          "Install the CUDA libraries this build opens (the framework's nvidia-* wheels), or put the toolkit's on "
          "the loader's path.";
    x.fix = {text, std::move(cmds), {fmt::format("ldconfig -p | grep {}", fixes::shell_quote(libs.front()))}};
  };
  if (!needed.empty()) {
    auto x = make_finding("framework-library-missing");
    x.title = fmt::format("{} opens {} at run time, which the loader cannot find", v.who, fmt::join(needed, ", "));
    x.detail = without_gpu_text(v, needed);
    x.evidence = evidence(needed);
    fix_for(needed, x);
    out.push_back(std::move(x));
  }
  if (!optional.empty()) {
    auto x = make_finding("framework-library-optional-missing");
    std::vector<std::string> what;
    for (const auto& m : optional) what.push_back(v.kb.runtime_library(m)->needed_for);
    x.title = fmt::format("{} opens {} at run time, which the loader cannot find: {} will fail", v.who,
                          fmt::join(optional, ", "), library_name(v.kb, optional.front()));
    x.detail =
        fmt::format("The GPU works without {}; what needs {} fails when it is first used: {}.",
                    optional.size() == 1 ? "it" : "them", optional.size() == 1 ? "it" : "them", fmt::join(what, "; "));
    x.evidence = evidence(optional);
    fix_for(optional, x);
    out.push_back(std::move(x));
  }
}

bool missing_libraries_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  bool broken = false;
  if (!f.error.empty()) {
    auto x = make_finding("framework-library-missing");
    x.title = fmt::format("{}: {} cannot be read", v.who, f.gpu_library);
    x.evidence = {f.error};
    out.push_back(std::move(x));
    broken = true;
  }
  std::vector<std::string> linked, opened;
  for (const auto& m : f.missing)
    (std::find(f.dlopened.begin(), f.dlopened.end(), m) != f.dlopened.end() ? opened : linked).push_back(m);
  if (!opened.empty()) {
    dlopened_missing_rule(v, opened, out);
    broken = broken || std::any_of(opened.begin(), opened.end(), [&](const std::string& m) {
               const auto* rec = v.kb.runtime_library(m);
               return !rec || rec->needed_for.empty();
             });
  }
  if (!linked.empty()) {
    auto x = make_finding("framework-library-missing");
    x.title = fmt::format("{} needs {}, which the loader cannot find", v.who, fmt::join(linked, ", "));
    x.detail = "The import fails with \"cannot open shared object file\" (or the GPU is silently unused).";
    x.evidence = v.base_ev;
    x.evidence.push_back("resolved from " + f.gpu_library);
    x.fix = {"Reinstall the framework with its CUDA dependencies, or install the missing CUDA libraries.",
             {},
             {fmt::format("cudoctor ldd --why {} {}", linked.front(), fixes::shell_quote(f.gpu_library))}};
    out.push_back(std::move(x));
    broken = true;
  }
  return broken;
}

bool symbol_versions_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  bool broken = false;
  for (const auto& missing : f.missing_versions) {
    auto x = make_finding("framework-symbol-version-missing");
    x.title = fmt::format("{}: version {} not found", v.who, missing);
    x.detail = "The library the loader picks is older than the one the framework was built against.";
    x.fix = {"Install a newer copy of that library, or remove the older one from the loader's path.", {}};
    out.push_back(std::move(x));
    broken = true;
  }
  return broken;
}

bool shadowed_libraries_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  bool broken = false;
  // A library its shadowing opener opened (an older cuDNN's sub-libraries) follows from the opener's finding.
  const auto shadowed = [&](const snapshot::FrameworkLibrary& l) {
    return !l.bundled.empty() && !l.path.empty() && l.path != l.bundled;
  };
  const auto opened_by_shadowed = [&](const snapshot::FrameworkLibrary& l) {
    for (const auto& o : f.opened)
      if (o.soname == l.soname && o.opener != f.gpu_library)
        for (const auto& p : f.libraries)
          if (p.path == o.opener && shadowed(p)) return true;
    return false;
  };
  for (const auto& l : f.libraries)
    if (shadowed(l) && !opened_by_shadowed(l)) {
      // The shadowing copy against the one the framework ships: an older one lacks what the
      // framework was built against; the same version is a harmless second copy.
      const auto theirs = full_version(l.version);
      const auto [ours, ours_from] = bundled_version(v.kb, v.env, l);
      const int order = theirs && ours ? compare_common(*theirs, *ours) : -2;
      const auto name = library_name(v.kb, l.soname);
      auto x = make_finding(order == 0  ? FindingId("framework-library-duplicate")
                            : order > 0 ? FindingId("framework-library-shadowed-by-newer")
                                        : FindingId("framework-library-shadowed"));
      if (order == -2) {
        x.title = fmt::format("{} loads {} from {} instead of its own {}", v.who, l.soname, l.path, l.bundled);
        x.detail = fmt::format(
            "{} finds another copy first{}; mixing CUDA library versions causes wrong symbols, "
            "\"undefined symbol\" errors or crashes.",
            l.rule, l.version.empty() ? "" : " (version " + l.version + ")");
      } else if (order < 0) {
        x.title = fmt::format("{} loads {} {} from {}, older than its own {}", v.who, name, theirs->str(), l.path,
                              ours->str());
        x.detail = fmt::format(
            "{} finds the older copy first. The framework was built against {} {}: an older one "
            "lacks symbols and fixes it relies on (\"undefined symbol\", version "
            "mismatch errors, wrong results or crashes).",
            l.rule, name, ours->str());
      } else if (order > 0) {
        x.title = fmt::format("{} loads {} {} from {}, newer than its own {}", v.who, name, theirs->str(), l.path,
                              ours->str());
        x.detail = fmt::format(
            "{} finds the newer copy first. Newer CUDA libraries of the same major usually keep "
            "what older ones had, so this tends to work; the framework was tested with {}.",
            l.rule, ours->str());
      } else {
        x.title =
            fmt::format("{} loads {} {} from {}, the same version as its own copy", v.who, name, theirs->str(), l.path);
        x.detail = fmt::format(
            "{} finds another copy first, of the same version as the one the framework ships: "
            "harmless while the two stay the same.",
            l.rule);
      }
      x.evidence = lib_evidence(f);
      if (theirs) x.evidence.push_back(fmt::format("{}: version {} (its file name)", l.path, theirs->str()));
      if (ours) x.evidence.push_back(fmt::format("its own copy: version {}, from {}", ours->str(), ours_from));
      const auto dir = l.path.substr(0, l.path.rfind('/'));
      if (order == 0)
        x.fix = {"Nothing breaks while the versions match; take the directory off LD_LIBRARY_PATH to keep one copy.",
                 {}};
      else if (l.rule == "LD_LIBRARY_PATH")
        x.fix = {"Take that directory off LD_LIBRARY_PATH for this environment.",
                 {fixes::drop_from_ld_library_path({dir})}};
      else
        x.fix = {"Remove the other copy from the loader's path.",
                 {},
                 {fmt::format("cudoctor ldd --why {} {}", l.soname, fixes::shell_quote(f.gpu_library))}};
      out.push_back(std::move(x));
      broken = broken || order < 0;
    }
  return broken;
}

void two_runtimes_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  std::set<std::string> runtimes;
  for (const auto& l : f.libraries)
    if (l.soname.starts_with("libcudart.so.")) runtimes.insert(l.soname);
  if (runtimes.size() > 1) {
    auto x = make_finding("framework-two-cuda-runtimes");
    x.title = fmt::format("{} loads {}", v.who, fmt::join(runtimes, " and "));
    x.detail =
        "Two CUDA runtimes of different majors in one process keep separate state; device memory and "
        "streams of one are invalid in the other.";
    x.evidence = lib_evidence(f);
    out.push_back(std::move(x));
  }
}

}  // namespace cudoctor::rules::l3
