// L3: each framework in each Python environment, against the driver, the GPU and the loader
// (one function per finding, in l3_build.cpp and l3_libraries.cpp), then what the environments
// as a whole show.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l3_view.hpp"
#include "cudoctor/rules/rules.hpp"

namespace cudoctor::rules {
namespace {

using l3::FrameworkView;
using snapshot::Framework;
using snapshot::PythonEnv;

std::string label(const kb::KnowledgeBase& kb, const Framework& f, const PythonEnv& e) {
  return fmt::format("{} {} ({})", l3::display_name(kb, f.name), f.version,
                     e.interpreter.empty() ? e.prefix : e.interpreter);
}

// The import name of a framework, for a line that checks which copy an interpreter imports.
std::string module_of(const std::string& name) {
  return name == "jax" ? "jaxlib" : name;
}

void static_rules(const FrameworkView& v, std::vector<Finding>& out);

// Every finding about one framework in one environment, in causal order: the static view, then
// what the framework said itself (check --deep).
void one_framework(const view::Machine& m, const kb::KnowledgeBase& kb, const PythonEnv& env, const Framework& f,
                   std::vector<Finding>& out) {
  const FrameworkView v{m,
                        kb,
                        env,
                        f,
                        label(kb, f, env),
                        {fmt::format("{}: version {}, CUDA {}{}", f.source, f.version,
                                     f.cuda_unknown   ? "unknown"
                                     : f.cuda.empty() ? "none"
                                                      : f.cuda,
                                     f.hip.empty() ? "" : ", ROCm " + f.hip),
                         "location: " + f.location}};
  static_rules(v, out);
  l3::deep_rule(v, out);
}

// The static view of one framework: its build, libraries and kernels against this machine.
void static_rules(const FrameworkView& v, std::vector<Finding>& out) {
  const auto& f = v.f;
  if (l3::rocm_build_rule(v, out) || l3::cpu_only_rule(v, out)) return;
  bool broken = l3::jax_components_rule(v, out);
  broken = l3::missing_libraries_rule(v, out) || broken;
  broken = l3::symbol_versions_rule(v, out) || broken;
  broken = l3::shadowed_libraries_rule(v, out) || broken;
  l3::two_runtimes_rule(v, out);
  broken = l3::build_rules(v, out) || broken;
  l3::pins_rule(v, out);
  if (broken) return;
  auto x = make_finding("framework-found");
  x.title = f.cuda.empty() ? v.who : fmt::format("{}: CUDA {} build", v.who, f.cuda);
  x.evidence = v.base_ev;
  if (!f.sm_archs.empty()) x.evidence.push_back("cubins: " + fmt::format("{}", fmt::join(f.sm_archs, " ")));
  for (const auto& e : l3::lib_evidence(f)) x.evidence.push_back(e);
  out.push_back(std::move(x));
}

// "PyTorch, TensorFlow, JAX, CuPy or ONNX Runtime": the frameworks the knowledge base knows.
std::string framework_names(const kb::KnowledgeBase& kb) {
  std::vector<std::string> names;
  for (const auto& f : kb.frameworks()) names.push_back(f.display.empty() ? f.name : f.display);
  if (names.empty()) return "deep-learning framework";
  const auto last = names.back();
  names.pop_back();
  return names.empty() ? last : fmt::format("{} or {}", fmt::join(names, ", "), last);
}

void no_framework_rule(const kb::KnowledgeBase& kb, const snapshot::PythonFacts& py, std::vector<Finding>& out) {
  auto x = make_finding("no-framework");
  x.detail = fmt::format("No {} in the Python environments found.", framework_names(kb));
  // A machine with thousands of environments gets the first ones named and a count.
  constexpr std::size_t k_named = 20;
  for (std::size_t i = 0; i < py.envs.size() && i < k_named; ++i)
    x.evidence.push_back(py.envs[i].prefix + " (" + fmt::format("{}", fmt::join(py.envs[i].found_by, ", ")) + ")");
  if (py.envs.size() > k_named) x.evidence.push_back(fmt::format("and {} more environments", py.envs.size() - k_named));
  out.push_back(std::move(x));
}

// Lists of environments cut short: a framework past the cut is not reported.
void envs_not_inspected_rule(const snapshot::PythonFacts& py, std::vector<Finding>& out) {
  if (py.lists_cut.empty()) return;
  auto x = make_finding("python-envs-not-inspected");
  std::uint64_t skipped = 0;
  for (const auto& c : py.lists_cut) {
    skipped += c.entries - c.inspected;
    x.evidence.push_back(fmt::format("{}: {} entries, the first {} inspected", c.source, c.entries, c.inspected));
  }
  const auto& first = py.lists_cut.front();
  x.title = py.lists_cut.size() == 1 ? fmt::format("{} entries not inspected: {} lists {} Python environments", skipped,
                                                   first.source, first.entries)
                                     : fmt::format("{} entries not inspected in {} lists of Python environments",
                                                   skipped, py.lists_cut.size());
  x.detail = fmt::format(
      "cudoctor inspects the first {} entries of each list of environments, so that a directory "
      "anyone can write to cannot make a run take minutes; a framework in an environment past "
      "them is not reported.",
      first.inspected);
  x.fix = {"Name the environment to inspect: cudoctor --python ENVIRONMENT/bin/python3.", {}};
  out.push_back(std::move(x));
}

// The python a user types is not the one that has the framework.
void path_python_rule(const kb::KnowledgeBase& kb, const snapshot::PythonFacts& py, const PythonEnv* path_env,
                      std::vector<Finding>& out) {
  if (!path_env || !path_env->frameworks.empty()) return;
  std::vector<std::string> elsewhere;
  for (const auto& e : py.envs)
    for (const auto& f : e.frameworks)
      elsewhere.push_back(fmt::format("{} {} in {} ({})", l3::display_name(kb, f.name), f.version, e.prefix,
                                      e.interpreter.empty() ? "no interpreter" : e.interpreter));
  if (!elsewhere.empty()) {
    auto x = make_finding("python-on-path-lacks-framework");
    x.title = fmt::format("python3 on PATH ({}) has no framework; {}", py.path_python, elsewhere.front());
    x.detail =
        "`python3` runs an interpreter whose environment has none of the frameworks installed elsewhere, so "
        "\"import torch\" fails or picks another copy.";
    x.evidence = {"python3 on PATH: " + py.path_python + " -> " + py.path_python_env};
    for (const auto& e : elsewhere) x.evidence.push_back("found: " + e);
    x.fix = {"Run the interpreter that has it, or activate its environment.", {}};
    for (const auto& e : py.envs)
      if (!e.frameworks.empty() && !e.interpreter.empty()) {
        const auto mod = module_of(e.frameworks.front().name);
        x.fix.checks.push_back(
            fmt::format("{} -c 'import {}; print({}.__version__)'", fixes::shell_quote(e.interpreter), mod, mod));
        break;
      }
    out.push_back(std::move(x));
  }
}

}  // namespace

std::string l3::display_name(const kb::KnowledgeBase& kb, const std::string& name) {
  const auto* f = kb.framework(name);
  return f && !f->display.empty() ? f->display : name;
}

std::vector<Finding> framework_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  std::vector<Finding> out;
  const auto& py = m.snap.python;
  // A venv on PATH that imports the system's site-packages: the system's frameworks are
  // reported once, for the venv's python, the one the user runs.
  const PythonEnv* path_env = nullptr;
  for (const auto& e : py.envs)
    if (!py.path_python_env.empty() && e.prefix == py.path_python_env) path_env = &e;
  std::set<std::string> reported_in_path_venv;
  if (path_env && m.env_kind(*path_env) == view::EnvKind::venv_system_site)
    for (const auto& f : path_env->frameworks)
      if (f.inherited) reported_in_path_venv.insert(f.location);
  std::size_t count = 0;
  for (const auto& env : py.envs)
    for (const auto& f : env.frameworks) {
      ++count;
      if (&env != path_env && !f.inherited && reported_in_path_venv.count(f.location)) continue;
      one_framework(m, kb, env, f, out);
    }
  if (count == 0) no_framework_rule(kb, py, out);
  envs_not_inspected_rule(py, out);
  path_python_rule(kb, py, path_env, out);
  return out;
}

}  // namespace cudoctor::rules
