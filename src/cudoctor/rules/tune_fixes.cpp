// Fixes for tuning findings: each place a setting is written gets the command that comments
// its line out (or corrects its value), run as the one who may write the file, and then what
// makes the change take effect (daemon-reload, the initramfs, the boot loader's menu).
#include <fmt/format.h>

#include <set>

#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/tune.hpp"

namespace cudoctor::rules::tune {
namespace {

std::string sed_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (std::string_view("\\/.*[]^$&").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string scope_text(const snapshot::Setting& s) {
  if (s.scope == "process") return "this shell's environment";
  if (s.scope == "shell") return "shell start-up file";
  if (s.scope == "system") return "system-wide start-up file";
  if (s.scope == "conda") return "conda environment activation";
  if (s.scope == "venv") return "venv activation script";
  if (s.scope == "service") return "systemd unit";
  if (s.scope == "nccl-conf") return "NCCL configuration file";
  if (s.scope == "module-load") return "modprobe.d, applied when the module loads";
  if (s.scope == "boot") return s.source == "/proc/cmdline" ? "the running kernel's command line" : "run at boot";
  if (s.scope == "next-boot") return "boot loader configuration, the next boot's command line";
  return s.scope;
}

// Whether this user may edit the file without root.
bool user_file(const view::Machine& m, const snapshot::Setting& s) {
  return m.root || s.owned;
}

}  // namespace

bool Group::in_process() const {
  for (const auto* p : places)
    if (p->scope == "process") return true;
  return false;
}

std::vector<std::string> where(const Group& g) {
  std::vector<std::string> out;
  for (const auto* p : g.places) {
    const auto setting =
        p->kind == "nvidia-smi" ? fmt::format("{} {}", g.name, g.value) : fmt::format("{}={}", g.name, g.value);
    if (p->line == 0)
      out.push_back(
          fmt::format("{}: {} ({})", setting, p->source == "environment" ? "environment" : p->source, scope_text(*p)));
    else
      out.push_back(fmt::format("{}: {}:{} ({})", setting, p->source, p->line, scope_text(*p)));
  }
  return out;
}

namespace {

// sed -i on the file, as who may write it; links followed, so a linked ~/.bashrc stays a link.
std::string sed(const view::Machine& m, const snapshot::Setting& p, const std::string& script) {
  const auto cmd =
      fmt::format("sed --follow-symlinks -i {} {}", fixes::shell_quote(script), fixes::shell_quote(p.source));
  return user_file(m, p) ? cmd : fixes::as_root(m, cmd);
}

// Appends a line to the file, as who may write it.
std::string append(const view::Machine& m, const snapshot::Setting& p, const std::string& line) {
  if (user_file(m, p)) return fmt::format("echo {} >> {}", fixes::shell_quote(line), fixes::shell_quote(p.source));
  return fmt::format("echo {} | {} > /dev/null", fixes::shell_quote(line),
                     fixes::as_root(m, "tee -a " + fixes::shell_quote(p.source)));
}

// The line that sets name=value in a file of this syntax, "" for one cudoctor does not write.
std::string line_for(const std::string& syntax, const std::string& name, const std::string& value) {
  if (syntax == "sh") return fmt::format("export {}={}", name, fixes::shell_quote(value));
  if (syntax == "fish") return fmt::format("set -gx {} {}", name, fixes::shell_quote(value));
  if (syntax == "csh") return fmt::format("setenv {} {}", name, fixes::shell_quote(value));
  if (syntax == "environment" || syntax == "nccl") return name + "=" + value;
  return "";
}

// A word of a command line or options line taken away (or replaced), whole.
std::string word_script(int line, const std::string& word, const std::string& replacement) {
  return replacement.empty()
             ? fmt::format("{}s/[[:space:]]*{}\\([[:space:]\"']\\|$\\)/\\1/", line, sed_escape(word))
             : fmt::format("{}s/{}\\([[:space:]\"']\\|$\\)/{}\\1/", line, sed_escape(word), sed_escape(replacement));
}

}  // namespace

void undo(const view::Machine& m, const Group& g, const std::string& corrected, Fix& fix) {
  std::set<std::string> after;       // what makes the edits take effect, once each
  std::vector<std::string> by_hand;  // places cudoctor cannot edit safely
  bool boot_only = false;
  for (const auto* p : g.places) {
    if (p->source == "environment") continue;
    if (p->source == "/proc/cmdline") {
      boot_only = true;
      continue;
    }
    const auto where = fmt::format("{} line {}", p->source, p->line);
    if (p->syntax == "conda_state") {  // conda-meta/state: `conda env config vars`
      const auto prefix = p->source.substr(0, p->source.rfind("/conda-meta/"));
      if (m.has_tool("conda"))
        fix.commands.push_back(
            corrected.empty() ? fmt::format("conda env config vars unset {} -p {}", g.name, fixes::shell_quote(prefix))
                              : fmt::format("conda env config vars set {}={} -p {}", g.name,
                                            fixes::shell_quote(corrected), fixes::shell_quote(prefix)));
      else
        by_hand.push_back(fmt::format("{} (conda env config vars)", p->source));
      continue;
    }
    if ((p->syntax == "grub" || p->syntax == "cmdline" || (p->syntax == "modprobe" && !p->alone)) &&
        !p->written.empty()) {
      const auto key = p->written.substr(0, p->written.find('='));
      fix.commands.push_back(
          sed(m, *p, word_script(p->line, p->written, corrected.empty() ? "" : key + "=" + corrected)));
    } else if (p->alone && p->syntax == "systemd" && !p->source.starts_with("/etc/")) {
      // A packaged unit: an edit is undone by the next update; an override is not.
      by_hand.push_back(fmt::format("{} (a packaged unit: override it with systemctl edit {})", where,
                                    p->source.substr(p->source.rfind('/') + 1)));
      continue;
    } else if (p->alone && (corrected.empty() || !line_for(p->syntax, g.name, corrected).empty())) {
      fix.commands.push_back(sed(m, *p, fmt::format("{}s/^/# /", p->line)));
      if (!corrected.empty()) fix.commands.push_back(append(m, *p, line_for(p->syntax, g.name, corrected)));
    } else {
      by_hand.push_back(where);
      fix.checks.push_back(fmt::format("sed -n {} {}", fixes::shell_quote(std::to_string(p->line) + "p"),
                                       fixes::shell_quote(p->source)));
      continue;
    }
    if (p->scope == "service" && m.has_tool("systemctl")) {
      after.insert(fixes::as_root(m, "systemctl daemon-reload"));
      fix.text += " Restart the unit for it to take effect.";
    }
    if (p->scope == "module-load")
      if (const auto initramfs = fixes::rebuild_initramfs(m); !initramfs.empty()) after.insert(initramfs);
    if (p->scope == "next-boot" && p->source == "/etc/default/grub") {
      if (m.has_tool("update-grub"))
        after.insert(fixes::as_root(m, "update-grub"));
      else if (m.has_tool("grub2-mkconfig"))
        after.insert(fixes::as_root(m, "grub2-mkconfig -o /boot/grub2/grub.cfg"));
      else if (m.has_tool("grub-mkconfig"))
        after.insert(fixes::as_root(m, "grub-mkconfig -o /boot/grub/grub.cfg"));
    }
  }
  fix.commands.insert(fix.commands.end(), after.begin(), after.end());
  if (g.in_process() && g.places.front()->kind == "env")
    fix.commands.push_back(corrected.empty() ? "unset " + g.name
                                             : fmt::format("export {}={}", g.name, fixes::shell_quote(corrected)));
  if (!by_hand.empty()) {
    std::string list;
    for (const auto& b : by_hand) list += (list.empty() ? "" : "; ") + b;
    fix.text += fmt::format(" Change it by hand where the line does more than set it: {}.", list);
  }
  if (boot_only && fix.commands.empty())
    fix.text +=
        " It is on the running kernel's command line: take it out of the boot loader's configuration and "
        "reboot.";
}

}  // namespace cudoctor::rules::tune
