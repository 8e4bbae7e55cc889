// The directories a search looks in, each listed once per resolver.
#include "cudoctor/ld/resolver.hpp"

namespace cudoctor::ld {

const Resolver::Listing& Resolver::listing(const std::string& dir) {
  if (const auto it = m_listings.find(dir); it != m_listings.end()) return it->second;
  Listing l;
  if (auto names = m_sys.list_dir(dir)) {
    l.dir = l.listed = true;
    l.names.insert(names->begin(), names->end());
  } else {
    l.dir = m_sys.stat(dir).type == sys::FileType::directory;
  }
  return m_listings.emplace(dir, std::move(l)).first->second;
}

bool Resolver::may_exist(const std::string& dir, const std::string& name) {
  const auto& l = listing(dir);
  if (!l.dir) return false;
  if (l.listed && !l.names.contains(name)) return false;
  // Listed (or not listable): a stat settles it, so a dangling link is passed over as
  // ld.so's failing open passes over it.
  return m_sys.stat(dir + "/" + name).type != sys::FileType::missing;
}

}  // namespace cudoctor::ld
