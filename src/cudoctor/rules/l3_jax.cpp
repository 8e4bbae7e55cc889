// L3: JAX's packages against each other, by the rules JAX applies when it is imported
// (jax/_src/lib/__init__.py check_jaxlib_version; jaxlib/plugin_support.py from jax 0.5.3):
// jaxlib at least jax's _minimum_jaxlib_version and no newer than jax, and each CUDA plugin
// wheel exactly jaxlib's version. Versions are read as JAX reads them: the leading numbers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l3_view.hpp"

namespace cudoctor::rules::l3 {
namespace {

// JAX's parse: the leading [0-9]+(.[0-9]+)* ("0.4.31.dev2024+abc" -> 0.4.31).
std::optional<util::Version> jax_version(const std::string& s) {
  static const std::regex lead(R"(^[0-9]+(\.[0-9]+)*)");
  std::smatch m;
  if (!std::regex_search(s, m, lead)) return std::nullopt;
  return util::Version::parse(m.str());
}

const snapshot::PackageVersion* companion(const snapshot::Framework& f, std::string_view name) {
  for (const auto& c : f.companions)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace

bool jax_components_rule(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  if (f.name != "jax") return false;
  const auto jaxlib = jax_version(f.version);
  const auto* jax = companion(f, "jax");
  const auto jax_v = jax ? jax_version(jax->version) : std::nullopt;
  if (!jaxlib) return false;
  std::vector<std::string> problems, evidence;
  evidence.push_back(fmt::format("jaxlib {} ({})", f.version, f.source));
  if (jax) evidence.push_back(fmt::format("jax {} ({})", jax->version, jax->source));
  if (jax && !f.minimum_jaxlib.empty())
    evidence.push_back(fmt::format("jax/version.py: _minimum_jaxlib_version = {}", f.minimum_jaxlib));
  const auto minimum = jax_version(f.minimum_jaxlib);
  if (jax_v && minimum && *jaxlib < *minimum)
    problems.push_back(
        fmt::format("jaxlib {} is older than jax {} accepts (≥ {}): import jax fails (\"jaxlib is "
                    "version {}, but this version of jax requires version >= {}.\")",
                    f.version, jax->version, f.minimum_jaxlib, f.version, f.minimum_jaxlib));
  if (jax_v && *jaxlib > *jax_v)
    problems.push_back(fmt::format(
        "jaxlib {} is newer than jax {}: import jax fails (\"jaxlib version {} is newer than and incompatible with "
        "jax version {}\")",
        f.version, jax->version, f.version, jax->version));
  // From jax 0.5.3 jaxlib refuses a plugin of another version; before, the PJRT API versions clash.
  const bool checked = *jaxlib >= *util::Version::parse("0.5.3");
  for (const char* name : {"jax_cuda13_plugin", "jax_cuda12_plugin", "jax_cuda13_pjrt", "jax_cuda12_pjrt"}) {
    const auto* c = companion(f, name);
    if (!c) continue;
    evidence.push_back(fmt::format("{} {} ({})", c->name, c->version, c->source));
    const auto cv = jax_version(c->version);
    if (!cv || *cv == *jaxlib) continue;
    problems.push_back(
        checked ? fmt::format("{} {} is not jaxlib's version {}: JAX does not use it (\"JAX plugin {} version {} is "
                              "installed, but it is not compatible with the installed jaxlib version {}, so it will "
                              "not be used.\"), and GPU operations fail",
                              c->name, c->version, f.version, c->name, c->version, f.version)
                : fmt::format("{} {} is not jaxlib's version {}: the CUDA backend fails to start (\"Mismatched PJRT "
                              "plugin PJRT API version\") or runs kernels built for another jaxlib",
                              c->name, c->version, f.version));
  }
  if (problems.empty()) return false;
  auto x = make_finding("jax-components-mismatch");
  x.title = fmt::format("{}: {}", v.who, problems.front());
  x.detail =
      problems.size() == 1 ? "" : fmt::format("Also: {}.", fmt::join(problems.begin() + 1, problems.end(), "; "));
  x.evidence = evidence;
  // One version for all: jax's own (else jaxlib's), as each JAX release ships them together.
  const auto target = jax ? jax->version : f.version;
  std::string line = fmt::format("pip install \"jax=={0}\" \"jaxlib=={0}\"", target);
  for (const char* name : {"jax_cuda13_plugin", "jax_cuda12_plugin", "jax_cuda13_pjrt", "jax_cuda12_pjrt"})
    if (companion(f, name)) {
      std::string pkg = name;  // pip's spelling: jax-cuda12-plugin
      for (auto& ch : pkg) ch = ch == '_' ? '-' : ch;
      line += fmt::format(" \"{}=={}\"", pkg, target);
    }
  x.fix = {install_text(v, fmt::format("Install jax, jaxlib and the CUDA plugin at one version ({})", target)),
           v.m.env_kind(v.env) == view::EnvKind::system || f.inherited ? std::vector<std::string>{}
                                                                       : fixes::pip_install(v.m, v.env, nullptr, line)};
  out.push_back(std::move(x));
  return true;
}

}  // namespace cudoctor::rules::l3
