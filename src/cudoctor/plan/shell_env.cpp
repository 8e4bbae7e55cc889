#include "cudoctor/plan/shell_env.hpp"

#include <algorithm>

namespace cudoctor::plan {
namespace {

bool under(const std::string& path, const std::string& prefix) {
  return path == prefix || path.starts_with(prefix + "/");
}

}  // namespace

const snapshot::Toolkit* find_toolkit(const snapshot::ToolkitFacts& facts, const std::string& arg) {
  for (const auto& t : facts.toolkits)
    if (t.root == arg) return &t;
  for (const auto& t : facts.toolkits)  // newest first
    if (t.version == arg || t.version.starts_with(arg + ".")) return &t;
  return nullptr;
}

ShellEnv shell_env(const snapshot::ToolkitFacts& facts, const snapshot::Toolkit* target,
                   const std::function<std::string(const std::string&)>& to_host) {
  ShellEnv env;
  // What belongs to a toolkit: its root (not for a distribution toolkit, whose libraries live
  // in the system's directory), its bin directory, and the /usr/local/cuda link.
  std::vector<std::string> prefixes;
  for (const auto& t : facts.toolkits) {
    if (t.layout != "debian") prefixes.push_back(to_host(t.root));
    prefixes.push_back(to_host(t.bin_dir));
  }
  if (!facts.cuda_link_target.empty() || !facts.cuda_link_resolved.empty())
    prefixes.push_back(to_host("/usr/local/cuda"));
  env.toolkit_prefixes = prefixes;
  const auto keep = [&](const std::string& entry) {
    return std::none_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return under(entry, p); });
  };
  if (target) {
    env.chosen_bin = to_host(target->bin_dir);
    env.path.push_back(env.chosen_bin);
    if (target->layout != "debian" && !target->lib_dir.empty()) {
      env.chosen_lib = to_host(target->lib_dir);
      env.ld_library_path.push_back(env.chosen_lib);
    }
    env.cuda_home = to_host(target->root);
  }
  // Everything else stays exactly as it was, duplicates included.
  for (const auto& p : facts.path)
    if (keep(p)) env.path.push_back(p);
  for (const auto& p : facts.ld_library_path)
    if (keep(p)) env.ld_library_path.push_back(p);
  return env;
}

}  // namespace cudoctor::plan
