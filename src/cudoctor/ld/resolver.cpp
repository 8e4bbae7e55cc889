#include "cudoctor/ld/resolver.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/ld/dst.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::ld {
namespace {

std::string class_name(bool is64) {
  return is64 ? "ELFCLASS64" : "ELFCLASS32";
}

}  // namespace

util::Result<elf::ElfFile> read_loader_headers(const sys::Reader& f) {
  return elf::parse_elf(
      f.size(), [&f](std::uint64_t off, unsigned char* buf, std::size_t n) { return f.read_at(off, buf, n); },
      elf::Headers::loader);
}

Resolver::Resolver(const sys::Sys& sys, Config config) : m_sys(sys), m_config(std::move(config)) {}

const LdSoCache* Resolver::cache() const {
  if (!m_cache_read) {
    m_cache_read = true;
    const auto blob = m_sys.map_file(m_config.cache_path);
    if (!blob) {
      m_cache_error = blob.error();
    } else {
      auto c = parse_ld_so_cache((*blob)->data(), (*blob)->size());
      if ((*blob)->shrank())
        m_cache_error = m_config.cache_path + ": changed while it was read (the file shrank)";
      else if (c)
        m_cache = std::move(c).value();
      else
        m_cache_error = m_config.cache_path + ": " + c.error();
    }
  }
  return m_cache ? &*m_cache : nullptr;
}

const Resolver::Loaded& Resolver::read(const std::string& path) {
  const auto it = m_files.find(path);
  if (it != m_files.end()) return it->second;
  Loaded l;
  // Read at offsets, not mapped: the loader's headers are a few kilobytes of each file.
  const auto file = m_sys.open_reader(path);
  if (!file) {
    l.error = file.error();
  } else {
    const auto& f = **file;
    auto e = read_loader_headers(f);
    if (f.shrank())
      l.error = path + ": changed while it was read (the file shrank)";
    else if (e)
      l.elf = std::make_shared<const elf::ElfFile>(std::move(e).value());
    else
      l.error = path + ": " + e.error();
    l.identity = f.identity();
  }
  return m_files.emplace(path, std::move(l)).first->second;
}

// open_verify: the file must be an ELF shared object of the main program's class and machine.
// Why it cannot be used; nullopt when it can.
std::optional<std::string> Resolver::unusable(const std::string& path, const elf::ElfFile& main) {
  const auto& l = read(path);
  if (!l.elf) return l.error;
  if (l.elf->is_64 != main.is_64) return "wrong ELF class: " + class_name(l.elf->is_64);
  if (l.elf->machine != main.machine) return "wrong machine: " + elf::machine_name(l.elf->machine);
  return std::nullopt;
}

namespace {
// The directory part of a path as ld.so takes it: everything before the last slash, with no
// normalisation ("/opt/app/bin/../lib/libx.so" keeps its "..", as ld.so prints it).
std::string origin_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// A search directory as glibc's fillin_rpath keeps it: trailing slashes dropped, nothing else.
std::string trim_dir(std::string d) {
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

// A path as open() takes it: a relative one (and "", an empty search-path entry) from the
// current directory. "./" prefixes are dropped so the result reads as ld.so's open does.
std::string from_cwd(const std::string& path, const std::string& cwd) {
  if (path.starts_with('/')) return path;
  std::string_view rel = path;
  while (rel.starts_with("./")) rel.remove_prefix(2);
  if (rel == ".") rel = "";
  const auto base = cwd.size() > 1 && cwd.back() == '/' ? cwd.substr(0, cwd.size() - 1) : cwd;
  if (rel.empty()) return base;
  return (base == "/" ? "" : base) + "/" + std::string(rel);
}
}  // namespace

std::vector<std::string> Resolver::expand(const std::string& list, const Object& owner) const {
  std::vector<std::string> out;
  const auto origin = origin_of(owner.path);
  // An empty entry of a non-empty list is the current directory (glibc's fillin_rpath).
  if (list.empty()) return out;
  for (const auto d : util::split(list, ':'))
    out.push_back(trim_dir(substitute(std::string(d), origin, m_config.lib, m_config.platform)));
  return out;
}

std::optional<std::string> Resolver::search_dirs(const std::string& name, const std::vector<std::string>& dirs,
                                                 const elf::ElfFile& main, Lookup& trail) {
  for (const auto& written : dirs) {
    auto dir = from_cwd(written, m_config.cwd);
    const auto& l = listing(dir);
    trail.searched.push_back(std::move(dir));
    if (!l.dir) continue;
    for (const auto& at : places(trail.searched.back())) {
      if (!may_exist(at, name)) continue;
      auto candidate = at + "/" + name;
      auto why = unusable(candidate, main);
      if (!why) return candidate;
      // Listed but not there (a dangling link, or gone since): passed over, as ld.so's failing
      // open passes over it. The stat is made only now, so a file that opens needs none.
      if (!there(candidate)) continue;
      trail.rejected.push_back({std::move(candidate), std::move(*why)});
    }
  }
  return std::nullopt;
}

// A name with a slash is a path: no search (dl-load.c), DSTs expanded; a relative one is
// opened from the current directory, not from the requesting object's.
std::optional<Resolver::Found> Resolver::by_path(const std::string& name, const Object& loader,
                                                 const elf::ElfFile& main, Lookup& trail) {
  const auto expanded = substitute(name, origin_of(loader.path), m_config.lib, m_config.platform);
  const auto path = from_cwd(expanded, m_config.cwd);
  // Opened first; a stat only when that fails, to tell a missing file from an unusable one.
  auto why = unusable(path, main);
  if (!why)
    return Found{
        path, Rule::path,
        path == expanded ? "named by path" : "named by a relative path, from the current directory " + m_config.cwd};
  if (!there(path)) why.reset();
  if (path != expanded) trail.detail = "a relative path, from the current directory " + m_config.cwd;
  if (why && !why->empty()) trail.rejected.push_back({path, *why});
  return std::nullopt;
}

// 1. DT_RPATH, unless the requesting object has DT_RUNPATH: its own, then its loader's and up
//    the chain (each only if it has no DT_RUNPATH), then the executable's.
std::optional<Resolver::Found> Resolver::from_rpath(const std::string& name, const Tree& tree, int requester,
                                                    Lookup& trail) {
  const auto& main = *tree.objects[0].elf;
  if (tree.objects[static_cast<std::size_t>(requester)].elf->runpath) return std::nullopt;
  const auto in = [&](const Object& o) -> std::optional<Found> {
    if (const auto p = search_dirs(name, expand(*o.elf->rpath, o), main, trail))
      return Found{*p, Rule::rpath, fmt::format("DT_RPATH of {}: {}", o.path, *o.elf->rpath)};
    return std::nullopt;
  };
  bool did_main = false;
  for (int i = requester; i >= 0; i = tree.objects[static_cast<std::size_t>(i)].parent) {
    const auto& o = tree.objects[static_cast<std::size_t>(i)];
    did_main = did_main || i == 0;
    if (!o.elf || !o.elf->rpath || o.elf->runpath) continue;
    if (auto f = in(o)) return f;
  }
  const auto& m = tree.objects[0];
  if (!did_main && m.elf->rpath && !m.elf->runpath) return in(m);
  return std::nullopt;
}

// 2. LD_LIBRARY_PATH ($ORIGIN is empty there).
std::optional<Resolver::Found> Resolver::from_ld_library_path(const std::string& name, const elf::ElfFile& main,
                                                              Lookup& trail) {
  if (m_config.ld_library_path.empty()) return std::nullopt;
  std::vector<std::string> dirs;
  for (const auto& d : m_config.ld_library_path)
    dirs.push_back(trim_dir(substitute(d, "", m_config.lib, m_config.platform)));
  if (const auto p = search_dirs(name, dirs, main, trail))
    return Found{*p, Rule::ld_library_path, "LD_LIBRARY_PATH: " + origin_of(*p)};
  return std::nullopt;
}

// 3. DT_RUNPATH of the requesting object only.
std::optional<Resolver::Found> Resolver::from_runpath(const std::string& name, const Object& loader,
                                                      const elf::ElfFile& main, Lookup& trail) {
  if (!loader.elf->runpath) return std::nullopt;
  if (const auto p = search_dirs(name, expand(*loader.elf->runpath, loader), main, trail))
    return Found{*p, Rule::runpath, fmt::format("DT_RUNPATH of {}: {}", loader.path, *loader.elf->runpath)};
  return std::nullopt;
}

// 4. /etc/ld.so.cache: the one entry best_entry picks; ld.so does not fall back to another.
std::optional<Resolver::Found> Resolver::from_cache(const std::string& name, const elf::ElfFile& main, Lookup& trail) {
  const auto* c = cache();
  if (!c) return std::nullopt;
  // The cache is consulted whether or not it has the name: --why and the not-found line say so.
  trail.searched.push_back(m_config.cache_path);
  // A check's few lookups scan the entries; an ldd's hundreds go through an index, built once
  // they have cost more than building it (a few thousand entries).
  constexpr int k_index_after = 16;
  if (!m_cache_index && ++m_cache_lookups > k_index_after) m_cache_index.emplace(*c);
  const auto* best = m_cache_index ? m_cache_index->best_entry(name, main.is_64, main.machine, m_config.hwcaps_subdirs)
                                   : best_entry(*c, name, main.is_64, main.machine, m_config.hwcaps_subdirs);
  if (!best) return std::nullopt;
  const auto why = unusable(best->path, main);
  if (!why)
    return Found{best->path, Rule::ld_so_cache,
                 fmt::format("{} entry {}{}", m_config.cache_path, name,
                             best->hwcaps_subdir.empty() ? "" : " (glibc-hwcaps " + best->hwcaps_subdir + ")")};
  trail.rejected.push_back({best->path, there(best->path) && !why->empty() ? *why : "listed in the cache but missing"});
  return std::nullopt;
}

// 5. The default path.
std::optional<Resolver::Found> Resolver::from_default_path(const std::string& name, const elf::ElfFile& main,
                                                           Lookup& trail) {
  if (const auto p = search_dirs(name, m_config.system_dirs, main, trail))
    return Found{*p, Rule::default_path, "default directory " + origin_of(*p)};
  return std::nullopt;
}

// What a search's answer depends on, beyond the name and the run's fixed configuration: the
// requesting file (its DT_RUNPATH, DF_1_NODEFLIB, $ORIGIN), the program's class and machine,
// and, when the requester has no DT_RUNPATH, the DT_RPATHs from_rpath walks up the chain.
std::string Resolver::search_key(const std::string& name, const Tree& tree, int requester) const {
  const auto& main = *tree.objects[0].elf;
  const auto& loader = tree.objects[static_cast<std::size_t>(requester)];
  auto key = fmt::format("{}\n{}\n{}:{}", name, loader.path, main.is_64, main.machine);
  if (loader.elf->runpath) return key;
  bool did_main = false;
  for (int i = requester; i >= 0; i = tree.objects[static_cast<std::size_t>(i)].parent) {
    const auto& o = tree.objects[static_cast<std::size_t>(i)];
    did_main = did_main || i == 0;
    if (o.elf && o.elf->rpath && !o.elf->runpath) key += "\n" + o.path + "\n" + *o.elf->rpath;
  }
  const auto& m = tree.objects[0];
  if (!did_main && m.elf->rpath && !m.elf->runpath) key += "\n" + m.path + "\n" + *m.elf->rpath;
  return key;
}

Resolver::Searched Resolver::search(const std::string& name, const Tree& tree, int requester) {
  // A library that many trees load (libtorch_cpu.so under every libtorch) asks for the same
  // names from the same place in each: the answer, reasons and all, is worked out once.
  auto key = search_key(name, tree, requester);
  if (const auto it = m_searches.find(key); it != m_searches.end()) return it->second;
  auto s = search_uncached(name, tree, requester);
  m_searches.emplace(std::move(key), s);
  return s;
}

Resolver::Searched Resolver::search_uncached(const std::string& name, const Tree& tree, int requester) {
  const auto& main = *tree.objects[0].elf;
  const auto& loader = tree.objects[static_cast<std::size_t>(requester)];
  Searched s;
  auto& l = s.lookup;
  std::optional<Found> f;
  if (name.find('/') != std::string::npos) {
    f = by_path(name, loader, main, l);
  } else {
    f = from_rpath(name, tree, requester, l);
    if (!f) f = from_ld_library_path(name, main, l);
    if (!f) f = from_runpath(name, loader, main, l);
    if (!f && loader.elf->nodeflib()) {
      l.detail = fmt::format("{} has DF_1_NODEFLIB: ld.so.cache and the default path are not searched", loader.path);
    } else if (!f) {
      f = from_cache(name, main, l);
      if (!f) f = from_default_path(name, main, l);
    }
  }
  if (!f) {
    l.rule = Rule::not_found;
    return s;
  }
  l.rule = f->rule;
  l.detail = std::move(f->detail);
  s.path = std::move(f->path);
  return s;
}

Lookup Resolver::locate_from(const Tree& tree, int requester, const std::string& name, std::string& found) {
  auto s = search(name, tree, requester);
  found = std::move(s.path);
  return std::move(s.lookup);
}

Lookup Resolver::locate(const std::string& name, std::string& found, bool is_64, std::uint16_t machine) {
  auto program = std::make_shared<elf::ElfFile>();
  program->is_64 = is_64;
  program->machine = machine;
  program->has_dynamic = true;
  Tree tree;
  Object root;
  root.path = "(program)";
  root.elf = program;
  root.found = true;
  tree.objects.push_back(std::move(root));
  auto s = search(name, tree, 0);
  found = std::move(s.path);
  return std::move(s.lookup);
}

}  // namespace cudoctor::ld
