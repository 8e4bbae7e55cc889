#include "cudoctor/probe/python_env.hpp"

#include <cctype>

#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

bool is_dir(const sys::Sys& sys, const std::string& p) {
  return sys.stat(p).type == sys::FileType::directory;
}

}  // namespace

std::vector<std::string> sites_of(Context& ctx, const std::string& prefix, const std::string& kind,
                                  std::string& version) {
  const auto& sys = ctx.sys();
  std::vector<std::string> out;
  const bool wanted = !version.empty();
  if (const auto names = ctx.list_optional(prefix + "/lib"))
    for (const auto& n : *names)
      if (n.starts_with("python3.") || n.starts_with("python2.")) {
        if (wanted && n.substr(6) != version) continue;
        for (const char* sub : {"/site-packages", "/dist-packages"})
          if (is_dir(sys, prefix + "/lib/" + n + sub)) {
            out.push_back(prefix + "/lib/" + n + sub);
            if (version.empty()) version = n.substr(6);
          }
      }
  if (kind == "system") {
    // Debian and Ubuntu: packages in /usr/lib/python3/dist-packages, pip's in /usr/local.
    if (is_dir(sys, prefix + "/lib/python3/dist-packages"))
      out.insert(out.begin(), prefix + "/lib/python3/dist-packages");
    if (!version.empty() && is_dir(sys, "/usr/local/lib/python" + version + "/dist-packages"))
      out.insert(out.begin(), "/usr/local/lib/python" + version + "/dist-packages");
  }
  return out;
}

std::optional<VenvConfig> read_pyvenv_cfg(Context& ctx, const std::string& prefix) {
  const auto text = ctx.read_optional(prefix + "/pyvenv.cfg", 64 * 1024);
  if (!text) return std::nullopt;
  // CPython's Lib/site.py venv(): `key = value` lines split at the first '=', the key
  // stripped and lowered, the value stripped; the flag is true when it lowers to "true".
  VenvConfig cfg;
  for (const auto line : util::lines(*text)) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = util::to_lower(util::trim(line.substr(0, eq)));
    const auto value = util::trim(line.substr(eq + 1));
    if (key == "include-system-site-packages") cfg.system_site_packages = util::to_lower(value) == "true";
    if (key == "home" && value.starts_with('/')) cfg.base_prefix = sys::dirname(sys::normalize(value));
  }
  return cfg;
}

std::string installer_of(Context& ctx, const std::string& site, const std::string& dist, const std::string& version,
                         const std::string& prefix, std::initializer_list<const char*> conda_names) {
  // The INSTALLER file of the dist-info: the installer's name on its first line (PEP 376).
  if (!dist.empty())
    if (const auto text = ctx.read_optional(site + "/" + dist + "-" + version + ".dist-info/INSTALLER", 4096)) {
      const auto ls = util::lines(*text);
      if (!ls.empty() && !util::trim(ls.front()).empty()) return std::string(util::trim(ls.front()));
    }
  // conda names each installed package's record <name>-<version>-<build>.json. A version
  // starts with a digit, so "pytorch-" does not take pytorch-cuda or pytorch-mutex.
  const auto names = ctx.list_optional(prefix + "/conda-meta");
  if (!names) return "";
  for (const char* conda : conda_names) {
    const auto stem = std::string(conda) + "-";
    for (const auto& n : *names)
      if (n.starts_with(stem) && n.ends_with(".json") && n.size() > stem.size() &&
          std::isdigit(static_cast<unsigned char>(n[stem.size()])))
        return "conda";
  }
  return "";
}

}  // namespace cudoctor::probe
