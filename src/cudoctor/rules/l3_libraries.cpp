// L3: the libraries a framework loads: missing, lacking a symbol version, shadowed by another
// copy (older, newer or the same version as its own), or two CUDA runtimes in one process.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l3_view.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules::l3 {
namespace {

using snapshot::PythonEnv;

// The pip wheel (dist-info name prefix) that ships a CUDA library, by the soname's stem.
std::string wheel_of(const std::string& soname) {
  constexpr std::pair<const char*, const char*> k_wheels[] = {
      {"libcudnn", "nvidia_cudnn_cu"},         {"libcublas", "nvidia_cublas_cu"},
      {"libcudart", "nvidia_cuda_runtime_cu"}, {"libnccl", "nvidia_nccl_cu"},
      {"libcufft", "nvidia_cufft_cu"},         {"libcusparse", "nvidia_cusparse_cu"},
      {"libnvrtc", "nvidia_cuda_nvrtc_cu"},    {"libcurand", "nvidia_curand_cu"},
      {"libcusolver", "nvidia_cusolver_cu"},   {"libnvJitLink", "nvidia_nvjitlink_cu"},
      {"libcupti", "nvidia_cuda_cupti_cu"},
  };
  for (const auto& [stem, wheel] : k_wheels)
    if (soname.starts_with(stem)) return wheel;
  return "";
}

// The library's name as NVIDIA writes it, for titles; the soname when it has none here.
std::string library_name(const std::string& soname) {
  constexpr std::pair<const char*, const char*> k_names[] = {
      {"libcudnn", "cuDNN"},         {"libcublasLt", "cuBLASLt"},
      {"libcublas", "cuBLAS"},       {"libcudart", "the CUDA runtime"},
      {"libnccl", "NCCL"},           {"libcufft", "cuFFT"},
      {"libcusparse", "cuSPARSE"},   {"libnvrtc", "NVRTC"},
      {"libcurand", "cuRAND"},       {"libcusolver", "cuSOLVER"},
      {"libnvJitLink", "nvJitLink"},
  };
  for (const auto& [stem, name] : k_names)
    if (soname.starts_with(stem)) return name;
  return soname;
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
std::pair<std::optional<util::Version>, std::string> bundled_version(const PythonEnv& env,
                                                                     const snapshot::FrameworkLibrary& l) {
  const auto so = l.soname.find(".so.");
  const auto major = so == std::string::npos ? std::nullopt : util::Version::parse(l.soname.substr(so + 4));
  if (const auto wheel = wheel_of(l.soname); !wheel.empty() && l.bundled.find("/nvidia/") != std::string::npos)
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

// Libraries the framework opens at run time (not DT_NEEDED): the import works, the GPU does not.
void dlopened_missing_rule(const FrameworkView& v, const std::vector<std::string>& missing, std::vector<Finding>& out) {
  const auto& f = v.f;
  auto x = make_finding("framework-library-missing");
  x.title = fmt::format("{} opens {} at run time, which the loader cannot find", v.who, fmt::join(missing, ", "));
  x.detail =
      "The import works, but TensorFlow logs \"Could not load dynamic library\" (\"Cannot dlopen some GPU "
      "libraries\") and runs on the CPU: tf.config.list_physical_devices('GPU') is empty.";
  x.evidence = v.base_ev;
  for (const auto& m : missing)
    x.evidence.push_back(
        fmt::format("{}: not found from {} (its RUNPATH, LD_LIBRARY_PATH, ld.so.cache, the default "
                    "path)",
                    m, f.gpu_library));
  const auto line = same_release_line(v);
  auto cmds = line.empty() ? std::vector<std::string>{} : fixes::pip_install(v.m, v.env, &v.f, line);
  x.fix = {cmds.empty() ? std::string("Install the CUDA libraries this build needs (the nvidia-* wheels of "
                                      "tensorflow[and-cuda]), or put the toolkit's on the loader's path.")
                        : install_text(v, "Reinstall this release with its CUDA wheels (the and-cuda extra)"),
           std::move(cmds),
           {fmt::format("ldconfig -p | grep {}", fixes::shell_quote(missing.front()))}};
  out.push_back(std::move(x));
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
    broken = true;
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
  for (const auto& l : f.libraries)
    if (!l.bundled.empty() && !l.path.empty() && l.path != l.bundled) {
      // The shadowing copy against the one the framework ships: an older one lacks what the
      // framework was built against; the same version is a harmless second copy.
      const auto theirs = full_version(l.version);
      const auto [ours, ours_from] = bundled_version(v.env, l);
      const int order = theirs && ours ? compare_common(*theirs, *ours) : -2;
      const auto name = library_name(l.soname);
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
