// L0: the helper programs a fix may call for (package managers, the loader's tools, the
// container runtimes), found where a shell would find them. Nothing is run.
#include <algorithm>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

constexpr const char* k_tools[] = {"sudo",
                                   "su",
                                   "lspci",
                                   "nvidia-smi",
                                   "nvidia-modprobe",
                                   "nvidia-ctk",
                                   "direnv",
                                   "conda",
                                   "mamba",
                                   "micromamba",
                                   "uv",
                                   "pip",
                                   "pip3",
                                   "apt-get",
                                   "apt",
                                   "dpkg",
                                   "dnf",
                                   "yum",
                                   "rpm",
                                   "zypper",
                                   "pacman",
                                   "update-initramfs",
                                   "dracut",
                                   "mkinitcpio",
                                   "modprobe",
                                   "ldconfig",
                                   "systemctl",
                                   "docker",
                                   "podman",
                                   "kubectl",
                                   "dkms",
                                   "mokutil",
                                   "update-grub",
                                   "grub2-mkconfig",
                                   "grub-mkconfig",
                                   "nvidia-persistenced",
                                   "cudoctor"};

// After PATH: the directories root's PATH holds on Debian, Fedora and Arch, so a tool a
// user's PATH leaves out (sbin) is still found.
constexpr const char* k_fallback_dirs[] = {"/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"};

// PATH entries looked at; a longer PATH is cut, so a hostile environment bounds the work
// (names × directories stats).
constexpr std::size_t k_max_path_entries = 64;

// execvp(3) runs a file when it is a regular file (after links) with an execute bit.
bool executable(const sys::Sys& sys, const std::string& path) {
  const auto st = sys.stat(path);
  return st.type == sys::FileType::regular && (st.mode & 0111) != 0;
}

}  // namespace

std::vector<snapshot::Tool> probe_tools(Context& ctx) {
  const auto& sys = ctx.sys();
  std::vector<std::string> dirs;
  const auto add_dir = [&](std::string d) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(std::move(d));
  };
  std::size_t entries = 0;
  const auto path = sys.env("PATH").value_or("");
  for (const auto d : util::split(path, ':')) {
    if (++entries > k_max_path_entries) break;
    // An empty or relative entry is the shell's current directory, which a --root tree has not.
    if (d.empty() || d.front() != '/') continue;
    add_dir(std::string(d));
  }
  for (const char* d : k_fallback_dirs) add_dir(d);
  std::vector<snapshot::Tool> tools;
  for (const char* name : k_tools)
    for (const auto& d : dirs)
      if (auto p = (d == "/" ? "" : d) + "/" + name; executable(sys, p)) {
        tools.push_back({name, std::move(p)});
        break;
      }
  return tools;
}

}  // namespace cudoctor::probe
