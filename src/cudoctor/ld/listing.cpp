// The directories a search looks in: each stat-ed once, and listed once it has been asked
// about often enough that one listing costs less than the stats it saves.
#include <algorithm>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::ld {
namespace {

// A few lookups in a directory of thousands of entries (a check's libcuda.so.1 in
// /usr/lib/x86_64-linux-gnu) are cheaper as stats; ldd's hundreds, as one listing.
constexpr int k_list_after = 32;

}  // namespace

Resolver::Listing& Resolver::listing(const std::string& dir) {
  if (const auto it = m_listings.find(dir); it != m_listings.end()) return it->second;
  Listing l;
  l.dir = m_sys.stat(dir).type == sys::FileType::directory;
  return m_listings.emplace(dir, std::move(l)).first->second;
}

const std::vector<std::string>& Resolver::places(const std::string& dir) {
  auto& l = listing(dir);
  if (l.places) return *l.places;
  std::vector<std::string> subdirs = m_config.hwcaps_subdirs;
  subdirs.insert(subdirs.end(), m_config.legacy_subdirs.begin(), m_config.legacy_subdirs.end());
  std::vector<std::string> out;
  for (const auto& sub : subdirs) {
    // Each level of a subdirectory ("glibc-hwcaps/x86-64-v3") must be listed in the one above.
    std::string at = dir;
    bool present = true;
    for (const auto part : util::split(sub, '/')) {
      if (part.empty()) continue;
      present = present && may_exist(at, std::string(part));
      at += "/" + std::string(part);
    }
    if (present) out.push_back(std::move(at));
  }
  out.push_back(dir);
  // l is still the entry: the subdirectories' lookups add to the map, whose elements stay put.
  l.places = std::move(out);
  return *l.places;
}

bool Resolver::may_exist(const std::string& dir, const std::string& name) {
  auto& l = listing(dir);
  if (!l.dir) return false;
  if (const auto it = l.known.find(name); it != l.known.end()) return it->second;
  if (!l.listed && !l.unlistable && ++l.asked > k_list_after) {
    if (auto names = m_sys.list_dir(dir)) {
      l.names = std::move(names).value();
      if (!std::is_sorted(l.names.begin(), l.names.end())) std::sort(l.names.begin(), l.names.end());
      l.listed = true;
    } else {
      l.unlistable = true;  // execute-only: searched by stat
    }
  }
  // A listed directory answers by its listing (a dangling link in it is passed over when it
  // cannot be opened, see search_dirs); an unlisted one by a stat.
  const bool is = l.listed ? std::binary_search(l.names.begin(), l.names.end(), name) : there(dir + "/" + name);
  l.known.emplace(name, is);
  return is;
}

bool Resolver::there(const std::string& path) {
  if (const auto it = m_there.find(path); it != m_there.end()) return it->second;
  return m_there.emplace(path, m_sys.stat(path).type != sys::FileType::missing).first->second;
}

const std::string& Resolver::identity(const std::string& path) {
  const auto& l = read(path);
  return l.identity.empty() ? canonical(path) : l.identity;
}

const std::string& Resolver::canonical(const std::string& path) {
  if (const auto it = m_canonical.find(path); it != m_canonical.end()) return it->second;
  return m_canonical.emplace(path, m_sys.canonical(path).value_or(path)).first->second;
}

}  // namespace cudoctor::ld
