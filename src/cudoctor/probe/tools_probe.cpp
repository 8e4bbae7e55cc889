// L0: the helper programs a fix may call for (package managers, the loader's tools, the
// container runtimes), found where a shell would find them. Nothing is run.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

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

// Directories up to this size (two ext4 blocks: a few hundred names, one getdents) are
// listed once and their names looked up in memory; a larger one (/usr/bin: 1,300 names,
// 0.4 ms to list) has each name stat'ed, which costs less than its listing.
constexpr std::uint64_t k_max_listed_dir_bytes = 8192;

// The names a PATH directory holds, sorted: none when it is not there or not a directory;
// nullopt when it is not listed (a large directory, or one that cannot be listed: execute
// permission without read is enough for execvp), where any name may be there and each is
// stat'ed. A stat per name per directory made ~430 failing calls on this machine's 13-entry
// PATH.
using DirNames = std::optional<std::vector<std::string>>;

DirNames names_of(Context& ctx, const std::string& dir) {
  const auto st = ctx.sys().stat(dir);
  if (st.type == sys::FileType::missing ? st.error.empty() : st.type != sys::FileType::directory)
    return std::vector<std::string>{};
  if (st.type == sys::FileType::directory && st.size <= k_max_listed_dir_bytes) return ctx.list_quiet(dir);
  return std::nullopt;
}

bool may_hold(const DirNames& names, std::string_view name) {
  return !names || std::binary_search(names->begin(), names->end(), name);
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
  std::vector<DirNames> names;
  for (const auto& d : dirs) names.push_back(names_of(ctx, d));
  std::vector<snapshot::Tool> tools;
  for (const char* name : k_tools)
    for (std::size_t i = 0; i < dirs.size(); ++i)
      if (auto p = (dirs[i] == "/" ? "" : dirs[i]) + "/" + name; may_hold(names[i], name) && executable(sys, p)) {
        tools.push_back({name, std::move(p)});
        break;
      }
  return tools;
}

}  // namespace cudoctor::probe
