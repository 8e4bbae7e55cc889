// L0: the distribution packages that bring a driver, CUDA or a framework, read from the package
// managers' own databases (dpkg's status file, pacman's local database); nothing is run.
// rpm's database is an sqlite file (rpmdb.sqlite since RPM 4.16) and is not read: on Fedora,
// RHEL and SUSE the packages stay unknown, which packages_known says.
#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

// dpkg's status file is ~2 MB for 2,000 packages and passes 10 MB on a desktop with many
// more; past these bounds it is not a status file a machine has.
constexpr std::uint64_t k_max_status_bytes = std::uint64_t{64} << 20;
constexpr std::size_t k_max_stanzas = 200000;
constexpr std::size_t k_max_pacman_entries = 100000;

bool relevant(std::string_view name) {
  for (const char* word : {"nvidia", "cuda", "cudnn", "nccl", "libcuda", "nouveau", "tensorrt", "python3-torch"})
    if (util::contains_icase(name, word)) return true;
  return false;
}

// dpkg's "want flag status" triple says installed: flag "ok", status "installed".
bool installed(std::string_view status) {
  const auto words = util::split_ws(status);
  return words.size() == 3 && words[1] == "ok" && words[2] == "installed";
}

// What util::trim takes away, but the line feed a line never holds.
bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The value of a "Field: value" line when the line is that field, else nullopt.
std::optional<std::string_view> field(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || !line.starts_with(name) || line[name.size()] != ':') return std::nullopt;
  return util::trim(line.substr(name.size() + 1));
}

// Each line of a reader's first size() bytes, without its line feed, read 64 KiB at a time
// onto the end of one buffer that keeps only a line the last read cut: a 1 MB status file is
// 16 reads into pages already there, where a mapping faulted in each of its 240 pages.
// on_line returns false to stop. False when a read failed (error says why); a file that
// shrank ends early, which the reader's shrank() tells.
template <class OnLine>
bool each_line(const sys::Reader& file, std::string& error, OnLine&& on_line) {
  constexpr std::size_t k_chunk = std::size_t{64} << 10;
  std::string buf;
  for (std::uint64_t off = 0; off < file.size();) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(k_chunk, file.size() - off));
    const auto kept = buf.size();
    buf.resize(kept + want);
    const auto got = file.read_at(off, reinterpret_cast<unsigned char*>(buf.data() + kept), want);
    if (!got) {
      error = got.error();
      return false;
    }
    buf.resize(kept + *got);
    off += *got;
    const std::string_view text(buf);
    std::size_t pos = 0;
    for (auto eol = text.find('\n', kept); eol != std::string_view::npos; eol = text.find('\n', pos)) {
      if (!on_line(text.substr(pos, eol - pos))) return true;
      pos = eol + 1;
    }
    buf.erase(0, pos);
    if (*got < want) break;
  }
  if (!buf.empty()) on_line(std::string_view(buf));
  return true;
}

// deb822 stanzas separated by blank lines (dpkg's lib/dpkg/parse.c). The package is installed
// when the status word (the third of "want flag status") is "installed" with flag "ok":
// "install ok installed", and also "hold ok installed" (apt-mark hold) and
// "deinstall ok installed" (removal asked for but not done), which still have their files.
void read_dpkg(Context& ctx, snapshot::HostFacts& host) {
  const std::string path = "/var/lib/dpkg/status";
  const auto file = ctx.open_optional(path);
  if (!file) return;
  if (file->size() > k_max_status_bytes) {
    ctx.unreadable(path, fmt::format("larger than {} bytes", k_max_status_bytes));
    return;
  }
  std::vector<snapshot::Package> found;
  // Most stanzas are of packages that do not matter here: once the name says so, the rest of
  // the stanza is passed over line by line without looking at its fields, and nothing of it
  // is kept.
  std::string name, version, status;
  bool named = false, skipping = false;
  std::size_t stanzas = 0;
  const auto end_stanza = [&] {
    if (named) {
      ++stanzas;
      if (!skipping && installed(status)) found.push_back({name, version, "dpkg"});
    }
    name.clear(), version.clear(), status.clear();
    named = skipping = false;
  };
  std::string error;
  const bool read = each_line(*file, error, [&](std::string_view line) {
    // A line of nothing but blanks ends a stanza; one starting with a space or tab continues a
    // field; only the three fields' first letters need a closer look.
    if (line.empty() || blank(line.front())) {
      if (std::all_of(line.begin(), line.end(), blank)) end_stanza();
      return stanzas < k_max_stanzas;
    }
    const char first = line.front();
    if (skipping || (first != 'P' && first != 'V' && first != 'S')) return true;
    if (line.back() == '\r') line.remove_suffix(1);
    if (const auto v = field(line, "Package")) {
      named = !v->empty();
      skipping = named && !relevant(*v);
      if (!skipping) name = *v;
    } else if (const auto v2 = field(line, "Version")) {
      version = *v2;
    } else if (const auto v3 = field(line, "Status")) {
      status = *v3;
    }
    return true;
  });
  if (!read) {
    ctx.unreadable_error(path, error);
    return;
  }
  if (stanzas < k_max_stanzas) end_stanza();
  host.packages.insert(host.packages.end(), found.begin(), found.end());
  if (file->shrank()) {
    ctx.unreadable(path, "the file shrank while it was read");
    return;
  }
  if (stanzas >= k_max_stanzas) {
    ctx.unreadable(path, fmt::format("more than {} packages; the first {} were read", k_max_stanzas, k_max_stanzas));
    return;
  }
  host.packages_known.emplace_back("dpkg");
}

// pacman's local database: a directory <name>-<pkgver>-<pkgrel> per installed package whose
// desc file holds %NAME% and %VERSION% sections (libalpm/be_local.c). Only the directories
// whose name part is relevant have their desc read.
void read_pacman(Context& ctx, snapshot::HostFacts& host) {
  const std::string dir = "/var/lib/pacman/local";
  const auto names = ctx.list_optional(dir);
  if (!names) return;
  const auto n = std::min(names->size(), k_max_pacman_entries);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& entry = (*names)[i];
    // The version and release are the last two dash-separated parts; names may hold dashes.
    const auto rel = entry.rfind('-');
    const auto ver = rel == std::string::npos || rel == 0 ? std::string::npos : entry.rfind('-', rel - 1);
    if (ver == std::string::npos || !relevant(std::string_view(entry).substr(0, ver))) continue;
    const auto desc = ctx.read_optional(dir + "/" + entry + "/desc", 1 << 20);
    if (!desc) continue;
    snapshot::Package p{"", "", "pacman"};
    std::string section;
    for (const auto raw : util::lines(*desc)) {
      const auto line = util::trim(raw);
      if (line.size() > 2 && line.front() == '%' && line.back() == '%') {
        section = std::string(line);
      } else if (!line.empty()) {
        if (section == "%NAME%" && p.name.empty()) p.name = line;
        if (section == "%VERSION%" && p.version.empty()) p.version = line;
      }
    }
    if (!p.name.empty() && relevant(p.name)) host.packages.push_back(std::move(p));
  }
  if (names->size() > k_max_pacman_entries) {
    ctx.unreadable(
        dir, fmt::format("more than {} entries; the first {} were read", k_max_pacman_entries, k_max_pacman_entries));
    return;
  }
  host.packages_known.emplace_back("pacman");
}

}  // namespace

void probe_packages(Context& ctx, snapshot::HostFacts& host) {
  read_dpkg(ctx, host);
  read_pacman(ctx, host);
}

}  // namespace cudoctor::probe
