#include "cudoctor/plan/toolkit_selection.hpp"

#include <fmt/format.h>

namespace cudoctor::plan {
namespace {

bool inside(const std::string& path, const std::string& dir) {
  return !dir.empty() && (path == dir || path.starts_with(dir + "/"));
}

// "CUDA 12.4 (/usr/local/cuda-12.4)", "" when no toolkit holds path.
std::string owner(const snapshot::ToolkitFacts& f, const std::string& path) {
  const auto* t = toolkit_of(f, path);
  return t ? fmt::format("CUDA {} ({})", t->version, t->root) : "";
}

}  // namespace

const snapshot::Toolkit* toolkit_of(const snapshot::ToolkitFacts& facts, const std::string& path) {
  for (const auto& t : facts.toolkits)
    if (inside(path, t.root) || inside(path, t.bin_dir) || (t.layout != "debian" && inside(path, t.lib_dir))) return &t;
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> toolkit_selectors(const snapshot::ToolkitFacts& f,
                                                                   const Canonical& canonical) {
  std::vector<std::pair<std::string, std::string>> sel;
  sel.emplace_back("PATH", f.path_nvcc.empty() ? "no nvcc" : f.path_nvcc + " -> " + owner(f, f.path_nvcc_real));
  if (f.cuda_home) {
    const auto home = owner(f, canonical(*f.cuda_home).value_or(""));
    sel.emplace_back("CUDA_HOME", *f.cuda_home + (home.empty() ? " (no toolkit there)" : " -> " + home));
  } else {
    sel.emplace_back("CUDA_HOME", "not set");
  }
  sel.emplace_back("/usr/local/cuda", f.cuda_link_target.empty()     ? "no link"
                                      : f.cuda_link_resolved.empty() ? f.cuda_link_target + " (dangling)"
                                                                     : f.cuda_link_resolved);
  std::string llp = "no toolkit directory";
  for (const auto& d : f.ld_library_path)
    if (const auto w = owner(f, canonical(d).value_or(d)); !w.empty()) {
      llp = d + " -> " + w;
      break;
    }
  sel.emplace_back("LD_LIBRARY_PATH", llp);
  for (const auto& p : f.cudart_picks)
    sel.emplace_back("loader",
                     fmt::format("{} -> {}", p.soname, p.path.empty() ? "not found" : p.path + " (" + p.rule + ")"));
  return sel;
}

}  // namespace cudoctor::plan
