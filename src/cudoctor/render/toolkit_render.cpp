// `cudoctor toolkits` and `cudoctor env`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {
namespace {

using util::visible;

// One shell word that means exactly s. POSIX shells (bash, zsh) take everything up to the
// next ' literally, so ' is written '\''. fish's single quotes know two escapes, \\ and \',
// so both are escaped there: a value ending in \ must not turn the closing quote into a
// literal one. A value with a control character, a C1 code or bytes that are not UTF-8 would
// reach the terminal when the output is shown, so those bytes are written as \xHH escapes:
// inside $'…' for bash and zsh, between quoted parts for fish (\X for a byte past ASCII).
std::string quote(const std::string& s, bool fish) {
  const bool plain = !util::has_control(s);
  std::string out = plain || fish ? "'" : "$'";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (!plain && (u < 0x20 || u >= 0x7F))
      out += fish ? fmt::format("'\\{}{:02x}'", u < 0x80 ? 'x' : 'X', u) : fmt::format("\\x{:02x}", u);
    else if (c == '\'')
      out += plain && !fish ? "'\\''" : "\\'";
    else if (c == '\\' && (fish || !plain))
      out += "\\\\";
    else
      out += c;
  }
  return out + "'";
}

// A comment ends at a newline; what follows it would run.
std::string comment_line(const std::string& comment) {
  return "# " + visible(comment) + "\n";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

std::string visible_join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + visible(x);
  return out;
}

}  // namespace

std::string toolkits_text(const snapshot::ToolkitFacts& f,
                          const std::vector<std::pair<std::string, std::string>>& selected) {
  // Paths, versions and nvcc's answers come from the machine: escaped.
  std::string out;
  if (f.toolkits.empty()) out += "No CUDA toolkit found.\n";
  for (const auto& t : f.toolkits) {
    out += fmt::format("CUDA {}  {}\n", t.version.empty() ? "?" : visible(t.version), visible(t.root));
    out += fmt::format("  found by: {}\n", visible_join(snapshot::to_strings(t.found_by), ", "));
    std::vector<std::string> w;
    for (const auto& x : t.witnesses) w.push_back(x.source + " = " + x.version);
    if (!w.empty()) out += fmt::format("  version: {}\n", visible_join(w, "; "));
    out += fmt::format("  nvcc: {}\n  libraries: {}\n", t.nvcc.empty() ? "none" : visible(t.nvcc), visible(t.lib_dir));
    std::vector<std::string> c;
    for (const auto& x : t.components) c.push_back(x.name + " " + x.version);
    if (!c.empty()) out += fmt::format("  components: {}\n", visible_join(c, ", "));
    // What it compiles for is the knowledge base's answer for its version: nvcc itself is
    // the examined tree's code and is never run.
    if (const auto v = util::Version::parse(t.version)) {
      std::vector<std::string> archs;
      for (const auto& a : kb::builtin().architectures())
        for (const auto& cc : a.ccs)
          if (kb::builtin().toolkit_targets_cc(*v, cc.cc)) archs.push_back(plan::sm(cc.cc));
      if (!archs.empty()) out += fmt::format("  compiles for: {}\n", join(archs, " "));
    }
    if (!t.missing.empty()) out += fmt::format("  missing: {}\n", visible_join(t.missing, ", "));
  }
  if (!selected.empty()) {
    out += "\nWhat selects a toolkit here:\n";
    for (const auto& [what, which] : selected) out += fmt::format("  {:<16} {}\n", what, visible(which));
  }
  return out;
}

std::string env_script(const plan::ShellEnv& e, const std::string& shell, const std::string& comment) {
  const bool fish = shell == "fish";
  std::string out = comment_line(comment);
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
  for (const auto& p : e.toolkit_prefixes)
    cases += (cases.empty() ? "" : "|") + quote(p, false) + "|" + quote(p, false) + "/*";
  std::string out = comment_line(comment);
  out += "cudoctor_strip() { local out='' d; local IFS=:; for d in $1; do case \"$d\" in " +
         (cases.empty() ? std::string("''") : cases) +
         ") ;; *) out=\"${out:+$out:}$d\" ;; esac; done; printf '%s' \"$out\"; }\n";
  out += "export PATH=" + (e.chosen_bin.empty() ? std::string() : quote(e.chosen_bin, false) + ":") +
         "\"$(cudoctor_strip \"$PATH\")\"\n";
  out += "export LD_LIBRARY_PATH=" + (e.chosen_lib.empty() ? std::string() : quote(e.chosen_lib, false)) +
         "\"$(l=$(cudoctor_strip \"${LD_LIBRARY_PATH:-}\"); printf '%s' \"" + (e.chosen_lib.empty() ? "" : "${l:+:}") +
         "$l\")\"\n";
  out += e.cuda_home ? "export CUDA_HOME=" + quote(*e.cuda_home, false) + "\n" : "unset CUDA_HOME\n";
  out += "unset -f cudoctor_strip\n";
  return out;
}

std::string with_env_block(const std::string& existing, const std::string& block) {
  static const std::string k_begin =
      "# >>> cudoctor env >>> (managed by `cudoctor env --write`; edits inside are replaced)\n";
  static const std::string k_end = "# <<< cudoctor env <<<\n";
  const auto managed = k_begin + block + k_end;
  const auto b = existing.find(k_begin);
  const auto e = b == std::string::npos ? std::string::npos : existing.find(k_end, b);
  if (e != std::string::npos) return existing.substr(0, b) + managed + existing.substr(e + k_end.size());
  if (existing.empty()) return managed;
  return existing + (existing.back() == '\n' ? "\n" : "\n\n") + managed;
}

}  // namespace cudoctor::render
