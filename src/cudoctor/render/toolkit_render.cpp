// `cudoctor toolkits` and `cudoctor env`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"

namespace cudoctor::render {
namespace {

// Single-quoted for POSIX shells and fish: ' becomes '\'' (POSIX) or \' (fish).
std::string quote(const std::string& s, bool fish) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? (fish ? std::string("\\'") : std::string("'\\''")) : std::string(1, c);
  return out + "'";
}

std::string join(const std::vector<std::string>& v, const char* sep) { return fmt::format("{}", fmt::join(v, sep)); }

}  // namespace

std::string toolkits_text(const snapshot::ToolkitFacts& f, const std::vector<std::pair<std::string, std::string>>& selected) {
  std::string out;
  if (f.toolkits.empty()) out += "No CUDA toolkit found.\n";
  for (const auto& t : f.toolkits) {
    out += fmt::format("CUDA {}  {}\n", t.version.empty() ? "?" : t.version, t.root);
    out += fmt::format("  found by: {}\n", join(t.found_by, ", "));
    std::vector<std::string> w;
    for (const auto& x : t.witnesses) w.push_back(x.source + " = " + x.version);
    if (!w.empty()) out += fmt::format("  version: {}\n", join(w, "; "));
    out += fmt::format("  nvcc: {}\n  libraries: {}\n", t.nvcc.empty() ? "none" : t.nvcc, t.lib_dir);
    std::vector<std::string> c;
    for (const auto& x : t.components) c.push_back(x.name + " " + x.version);
    if (!c.empty()) out += fmt::format("  components: {}\n", join(c, ", "));
    // What it compiles for is the knowledge base's answer for its version: nvcc itself is
    // the examined tree's code and is never run.
    if (const auto v = util::Version::parse(t.version)) {
      std::vector<std::string> archs;
      for (const auto& a : kb::builtin().architectures())
        for (const auto& cc : a.ccs)
          if (kb::builtin().toolkit_targets_cc(*v, cc.cc)) archs.push_back(plan::sm(cc.cc));
      if (!archs.empty()) out += fmt::format("  compiles for: {}\n", join(archs, " "));
    }
    if (!t.missing.empty()) out += fmt::format("  missing: {}\n", join(t.missing, ", "));
  }
  if (!selected.empty()) {
    out += "\nWhat selects a toolkit here:\n";
    for (const auto& [what, which] : selected) out += fmt::format("  {:<16} {}\n", what, which);
  }
  return out;
}

std::string env_script(const plan::ShellEnv& e, const std::string& shell, const std::string& comment) {
  const bool fish = shell == "fish";
  std::string out = "# " + comment + "\n";
  if (fish) {
    out += "set -gx PATH";
    for (const auto& p : e.path) out += " " + quote(p, true);
    out += ";\n";
    out += e.ld_library_path.empty() ? "set -e LD_LIBRARY_PATH;\n"
                                     : "set -gx LD_LIBRARY_PATH " + quote(join(e.ld_library_path, ":"), true) + ";\n";
    out += e.cuda_home ? "set -gx CUDA_HOME " + quote(*e.cuda_home, true) + ";\n" : "set -e CUDA_HOME;\n";
  } else {
    out += "export PATH=" + quote(join(e.path, ":"), false) + "\n";
    out += e.ld_library_path.empty() ? "unset LD_LIBRARY_PATH\n"
                                     : "export LD_LIBRARY_PATH=" + quote(join(e.ld_library_path, ":"), false) + "\n";
    out += e.cuda_home ? "export CUDA_HOME=" + quote(*e.cuda_home, false) + "\n" : "unset CUDA_HOME\n";
  }
  return out;
}

std::string env_file(const plan::ShellEnv& e, const std::string& comment) {
  // For direnv (.envrc, bash) or a project env file: filters the shell's own PATH when it is
  // sourced, so entries added later are kept.
  std::string cases;
  for (const auto& p : e.toolkit_prefixes) cases += (cases.empty() ? "" : "|") + quote(p, false) + "|" + quote(p, false) + "/*";
  std::string out = "# " + comment + "\n";
  out += "cudoctor_strip() { local out='' d; local IFS=:; for d in $1; do case \"$d\" in " +
         (cases.empty() ? std::string("''") : cases) + ") ;; *) out=\"${out:+$out:}$d\" ;; esac; done; printf '%s' \"$out\"; }\n";
  out += "export PATH=" + (e.chosen_bin.empty() ? std::string() : quote(e.chosen_bin, false) + ":") + "\"$(cudoctor_strip \"$PATH\")\"\n";
  out += "export LD_LIBRARY_PATH=" + (e.chosen_lib.empty() ? std::string() : quote(e.chosen_lib, false)) +
         "\"$(l=$(cudoctor_strip \"${LD_LIBRARY_PATH:-}\"); printf '%s' \"" + (e.chosen_lib.empty() ? "" : "${l:+:}") + "$l\")\"\n";
  out += e.cuda_home ? "export CUDA_HOME=" + quote(*e.cuda_home, false) + "\n" : "unset CUDA_HOME\n";
  out += "unset -f cudoctor_strip\n";
  return out;
}

}  // namespace cudoctor::render
