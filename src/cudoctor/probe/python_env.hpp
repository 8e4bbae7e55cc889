#pragma once
// The layout of one Python environment as the file system shows it: its site-packages
// directories, its pyvenv.cfg, who installed a package in it. Used by python_probe.cpp.
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/probe/context.hpp"

namespace cudoctor::probe {

// The site-packages (and Debian's dist-packages) directories of the environment at prefix,
// in import order. kind "system" adds Debian's /usr/local/lib/pythonX.Y/dist-packages and
// /usr/lib/python3/dist-packages. When version ("3.11") is given only that version's
// directories are taken; otherwise version is set to the first one found.
std::vector<std::string> sites_of(Context& ctx, const std::string& prefix, const std::string& kind,
                                  std::string& version);

// What a venv's pyvenv.cfg says (the keys site.py reads).
struct VenvConfig {
  bool system_site_packages = false;  // include-system-site-packages = true (any case)
  std::string base_prefix;            // the parent of `home`, the base interpreter's bin directory
};
// Reads <prefix>/pyvenv.cfg; nullopt when there is none (recorded as unreadable when it
// exists but cannot be read).
std::optional<VenvConfig> read_pyvenv_cfg(Context& ctx, const std::string& prefix);

// Who installed the distribution dist-version in site: its dist-info's INSTALLER ("pip",
// "uv", "conda"), else "conda" when <prefix>/conda-meta holds <name>-<version>…json for one
// of conda_names, else "".
std::string installer_of(Context& ctx, const std::string& site, const std::string& dist, const std::string& version,
                         const std::string& prefix, std::initializer_list<const char*> conda_names);

}  // namespace cudoctor::probe
