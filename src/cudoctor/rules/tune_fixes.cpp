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

bool user_file(const view::Machine& m, const snapshot::Setting& s) {
  if (m.root) return true;
  for (const auto& home : m.snap.host.private_homes)
    if (!home.empty() && s.source.starts_with(home + "/")) return true;
  return s.scope == "shell" || s.scope == "venv" || s.scope == "conda";
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

void undo(const view::Machine& m, const Group& g, const std::string& corrected, Fix& fix) {
  std::set<std::string> after;  // what makes the edits take effect, once each
  bool boot_only = false;
  for (const auto* p : g.places) {
    if (p->source == "environment") continue;
    if (p->source == "/proc/cmdline") {
      boot_only = true;
      continue;
    }
    if (p->line == 0) {  // conda-meta/state: `conda env config vars`
      const auto prefix = p->source.substr(0, p->source.rfind("/conda-meta/"));
      if (m.has_tool("conda"))
        fix.commands.push_back(
            corrected.empty() ? fmt::format("conda env config vars unset {} -p {}", g.name, fixes::shell_quote(prefix))
                              : fmt::format("conda env config vars set {}={} -p {}", g.name,
                                            fixes::shell_quote(corrected), fixes::shell_quote(prefix)));
      continue;
    }
    std::string script;
    if (p->scope == "next-boot") {
      const auto token = g.value.empty() ? g.name : g.name + "=" + g.value;
      script = corrected.empty()
                   ? fmt::format("{}s/[[:space:]]*{}//", p->line, sed_escape(token))
                   : fmt::format("{}s/{}/{}/", p->line, sed_escape(token), sed_escape(g.name + "=" + corrected));
    } else if (corrected.empty()) {
      script = fmt::format("{}s/^/# /", p->line);
    } else {
      script =
          fmt::format("{}s/{}/{}/", p->line, sed_escape(g.name + "=" + g.value), sed_escape(g.name + "=" + corrected));
    }
    const auto cmd = fmt::format("sed -i {} {}", fixes::shell_quote(script), fixes::shell_quote(p->source));
    fix.commands.push_back(user_file(m, *p) ? cmd : fixes::as_root(m, cmd));
    if (p->scope == "service" && m.has_tool("systemctl")) after.insert(fixes::as_root(m, "systemctl daemon-reload"));
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
  if (boot_only && fix.commands.empty())
    fix.text +=
        " It is on the running kernel's command line: take it out of the boot loader's configuration and "
        "reboot.";
}

}  // namespace cudoctor::rules::tune
