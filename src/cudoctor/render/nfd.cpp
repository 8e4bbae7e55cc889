#include "cudoctor/render/nfd.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "cudoctor/util/version.hpp"

namespace cudoctor::render {

namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A label's name part obeys the value's rules and is never empty.
std::string label_name(std::string_view s) {
  const auto v = nfd_label_value(s);
  return v.empty() ? "unnamed" : v;
}

}  // namespace

std::string nfd_label_value(std::string_view s) {
  std::string out;
  for (const char c : s) out += alnum(c) || c == '-' || c == '_' || c == '.' ? c : '_';
  if (out.size() > 63) out.resize(63);
  const auto first = out.find_first_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
  if (first == std::string::npos) return "";
  out.erase(0, first);
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  return out;
}

std::string nfd_namespace_problem(std::string_view ns) {
  if (ns.empty() || ns.size() > 253) return "a label namespace is a DNS subdomain of 1 to 253 characters";
  std::size_t start = 0;
  while (start <= ns.size()) {
    const auto dot = ns.find('.', start);
    const auto part = ns.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 63 || !alnum(part.front()) || !alnum(part.back()))
      return "each dot-separated part is 1 to 63 lower-case letters, digits or '-', beginning and ending with a "
             "letter or digit";
    for (const char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
        return "each dot-separated part is 1 to 63 lower-case letters, digits or '-', beginning and ending with a "
               "letter or digit";
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  // nfd-master denies kubernetes.io and its sub-namespaces, except these two trees (its
  // master configuration reference, denyLabelNs).
  for (const std::string_view allowed : {"feature.node.kubernetes.io", "profile.node.kubernetes.io"})
    if (ns == allowed || ns.ends_with("." + std::string(allowed))) return "";
  if (ns == "kubernetes.io" || ns.ends_with(".kubernetes.io"))
    return "nfd-master always denies kubernetes.io and its sub-namespaces (feature.node.kubernetes.io and "
           "profile.node.kubernetes.io excepted)";
  return "";
}

std::string nfd_labels(const report::Report& r, const NfdOptions& o) {
  const auto& s = r.snapshot;
  std::string out = fmt::format("# cudoctor {} check{}: labels for node-feature-discovery's local source\n",
                                o.tool_version, o.generated.empty() ? "" : ", " + o.generated);
  if (!o.expires.empty()) out += "# +expiry-time=" + o.expires + "\n";
  const auto label = [&](std::string_view name, std::string_view value) {
    out += fmt::format("{}/{}={}\n", o.label_namespace, label_name(name), nfd_label_value(value));
  };
  label("ok", r.verdict.healthy ? "true" : "false");
  label("broken-layer", r.verdict.break_layer ? rules::to_string(*r.verdict.break_layer) : "none");
  if (!r.verdict.healthy && !r.verdict.break_finding.empty()) label("break", r.verdict.break_finding);
  const auto problems = report::problems(r);
  int errors = 0;
  for (const auto* f : problems) errors += f->severity == rules::Severity::error;
  label("errors", std::to_string(errors));
  label("warnings", std::to_string(static_cast<int>(problems.size()) - errors));
  std::set<std::string> seen;
  for (const auto* f : problems)
    if (seen.insert(f->id).second) label("problem." + f->id, rules::to_string(f->severity));
  if (!s.driver.kernel_module.version.empty()) label("driver", s.driver.kernel_module.version);
  if (s.driver.nvml.cuda_driver_version > 0)
    label("cuda-driver", util::cuda_version_string(s.driver.nvml.cuda_driver_version));
  // The CUDA each framework was built for: from the environment of the python3 first on PATH,
  // then from the first other environment that has it, in the report's order.
  std::vector<const snapshot::PythonEnv*> envs;
  for (const auto& env : s.python.envs)
    if (env.prefix == s.python.path_python_env)
      envs.insert(envs.begin(), &env);
    else
      envs.push_back(&env);
  std::set<std::string> frameworks;
  for (const auto* env : envs)
    for (const auto& f : env->frameworks)
      if (frameworks.insert(f.name).second)
        label(f.name + "-cuda", !f.cuda.empty()  ? f.cuda
                                : f.cuda_unknown ? "unknown"
                                : !f.hip.empty() ? "rocm"
                                                 : "cpu");
  return out;
}

}  // namespace cudoctor::render
