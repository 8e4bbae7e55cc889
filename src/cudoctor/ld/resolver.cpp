#include "cudoctor/ld/resolver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>

#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::ld {
namespace {

std::string class_name(bool is64) {
  return is64 ? "ELFCLASS64" : "ELFCLASS32";
}

// Replaces $ORIGIN, $LIB, $PLATFORM (and their ${…} forms) as glibc's
// expand_dynamic_string_token does.
std::string substitute(std::string s, const std::string& origin, const Config& c) {
  const std::pair<const char*, const std::string*> tokens[] = {
      {"ORIGIN", &origin}, {"LIB", &c.lib}, {"PLATFORM", &c.platform}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] != '$') {
      out += s[i++];
      continue;
    }
    bool done = false;
    for (const auto& [name, value] : tokens) {
      const std::string plain = std::string("$") + name;
      const std::string braced = std::string("${") + name + "}";
      if (s.compare(i, braced.size(), braced) == 0) {
        out += *value;
        i += braced.size();
        done = true;
      } else if (s.compare(i, plain.size(), plain) == 0 &&
                 (i + plain.size() == s.size() ||
                  !(std::isalnum(static_cast<unsigned char>(s[i + plain.size()])) || s[i + plain.size()] == '_'))) {
        out += *value;
        i += plain.size();
        done = true;
      }
      if (done) break;
    }
    if (!done) out += s[i++];
  }
  return out;
}

}  // namespace

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
  const auto blob = m_sys.map_file(path);
  if (!blob) {
    l.error = blob.error();
  } else {
    auto e = elf::parse_elf((*blob)->data(), (*blob)->size());
    if ((*blob)->shrank())
      l.error = path + ": changed while it was read (the file shrank)";
    else if (e)
      l.elf = std::make_shared<const elf::ElfFile>(std::move(e).value());
    else
      l.error = path + ": " + e.error();
  }
  return m_files.emplace(path, std::move(l)).first->second;
}

// open_verify: the file must be an ELF shared object of the main program's class and machine.
std::optional<std::string> Resolver::verify(const std::string& path, const elf::ElfFile& main, std::string& why) {
  const auto& l = read(path);
  if (!l.elf) {
    why = l.error;
    return std::nullopt;
  }
  if (l.elf->is_64 != main.is_64) {
    why = "wrong ELF class: " + class_name(l.elf->is_64);
    return std::nullopt;
  }
  if (l.elf->machine != main.machine) {
    why = "wrong machine: " + elf::machine_name(l.elf->machine);
    return std::nullopt;
  }
  return path;
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
  for (const auto d : util::split(list, ':')) out.push_back(trim_dir(substitute(std::string(d), origin, m_config)));
  return out;
}

bool Resolver::search_dirs(const std::string& name, const std::vector<std::string>& dirs, const elf::ElfFile& main,
                           Lookup& l, std::string& found) {
  std::vector<std::string> subdirs = m_config.hwcaps_subdirs;
  subdirs.insert(subdirs.end(), m_config.legacy_subdirs.begin(), m_config.legacy_subdirs.end());
  subdirs.emplace_back("");
  for (const auto& written : dirs) {
    const auto dir = from_cwd(written, m_config.cwd);
    l.searched.push_back(dir);
    if (m_sys.stat(dir).type != sys::FileType::directory) continue;
    for (const auto& sub : subdirs) {
      const auto candidate = dir + "/" + (sub.empty() ? "" : sub + "/") + name;
      if (m_sys.stat(candidate).type == sys::FileType::missing) continue;
      std::string why;
      if (verify(candidate, main, why)) {
        found = candidate;
        return true;
      }
      l.rejected.push_back({candidate, why});
    }
  }
  return false;
}

Lookup Resolver::search(const std::string& name, const Tree& tree, int requester, std::string& found) {
  const auto& main = *tree.objects[0].elf;
  const auto& loader = tree.objects[static_cast<std::size_t>(requester)];
  Lookup l;
  if (name.find('/') != std::string::npos) {
    // A name with a slash is a path: no search (dl-load.c), DSTs expanded; a relative one
    // is opened from the current directory, not from the requesting object's.
    const auto expanded = substitute(name, origin_of(loader.path), m_config);
    const auto path = from_cwd(expanded, m_config.cwd);
    std::string why;
    l.rule = "path";
    if (m_sys.stat(path).type != sys::FileType::missing && verify(path, main, why)) {
      found = path;
      l.detail =
          path == expanded ? "named by path" : "named by a relative path, from the current directory " + m_config.cwd;
      return l;
    }
    if (path != expanded) l.detail = "a relative path, from the current directory " + m_config.cwd;
    if (!why.empty()) l.rejected.push_back({path, why});
    l.rule = "not found";
    return l;
  }
  // 1. DT_RPATH, unless the requesting object has DT_RUNPATH: its own, then its loader's and
  //    up the chain (each only if it has no DT_RUNPATH), then the executable's.
  if (!loader.elf->runpath) {
    bool did_main = false;
    for (int i = requester; i >= 0; i = tree.objects[static_cast<std::size_t>(i)].parent) {
      const auto& o = tree.objects[static_cast<std::size_t>(i)];
      did_main = did_main || i == 0;
      if (!o.elf || !o.elf->rpath || o.elf->runpath) continue;
      if (search_dirs(name, expand(*o.elf->rpath, o), main, l, found)) {
        l.rule = "DT_RPATH";
        l.detail = fmt::format("DT_RPATH of {}: {}", o.path, *o.elf->rpath);
        return l;
      }
    }
    const auto& m = tree.objects[0];
    if (!did_main && m.elf->rpath && !m.elf->runpath && search_dirs(name, expand(*m.elf->rpath, m), main, l, found)) {
      l.rule = "DT_RPATH";
      l.detail = fmt::format("DT_RPATH of {}: {}", m.path, *m.elf->rpath);
      return l;
    }
  }
  // 2. LD_LIBRARY_PATH.
  if (!m_config.ld_library_path.empty()) {
    std::vector<std::string> dirs;
    for (const auto& d : m_config.ld_library_path) dirs.push_back(trim_dir(substitute(d, "", m_config)));
    if (search_dirs(name, dirs, main, l, found)) {
      l.rule = "LD_LIBRARY_PATH";
      l.detail = "LD_LIBRARY_PATH: " + origin_of(found);
      return l;
    }
  }
  // 3. DT_RUNPATH of the requesting object only.
  if (loader.elf->runpath && search_dirs(name, expand(*loader.elf->runpath, loader), main, l, found)) {
    l.rule = "DT_RUNPATH";
    l.detail = fmt::format("DT_RUNPATH of {}: {}", loader.path, *loader.elf->runpath);
    return l;
  }
  const bool nodeflib = loader.elf->nodeflib();
  if (nodeflib)
    l.detail = fmt::format("{} has DF_1_NODEFLIB: ld.so.cache and the default path are not searched", loader.path);
  // 4. /etc/ld.so.cache.
  if (!nodeflib) {
    if (const auto* c = cache()) {
      const std::int32_t required = main.machine == 183 ? k_flag_aarch64_lib64 : k_flag_x8664_lib64;
      const CacheEntry* best = nullptr;
      std::size_t best_priority = 0;  // 0: no glibc-hwcaps; higher is better
      for (const auto& e : c->entries) {
        if (e.name != name) continue;
        if ((e.flags & k_flag_type_mask) != k_flag_elf_libc6 ||
            (main.is_64 && (e.flags & k_flag_required_mask) != required))
          continue;
        std::size_t priority = 0;
        if (!e.hwcaps_subdir.empty()) {
          const auto& hw = m_config.hwcaps_subdirs;
          const auto it = std::find(hw.begin(), hw.end(), "glibc-hwcaps/" + e.hwcaps_subdir);
          if (it == hw.end()) continue;  // the CPU does not support that level
          priority = hw.size() - static_cast<std::size_t>(it - hw.begin());
        } else if (e.hwcap != 0) {
          continue;  // legacy hwcap-specific entries: not for this loader
        }
        if (!best || priority > best_priority) {
          best = &e;
          best_priority = priority;
        }
      }
      if (best) {
        l.searched.push_back(m_config.cache_path);
        std::string why;
        if (m_sys.stat(best->path).type != sys::FileType::missing && verify(best->path, main, why)) {
          found = best->path;
          l.rule = "ld.so.cache";
          l.detail = fmt::format("{} entry {}{}", m_config.cache_path, name,
                                 best->hwcaps_subdir.empty() ? "" : " (glibc-hwcaps " + best->hwcaps_subdir + ")");
          return l;
        }
        l.rejected.push_back({best->path, why.empty() ? "listed in the cache but missing" : why});
      }
    }
    // 5. The default path.
    if (search_dirs(name, m_config.system_dirs, main, l, found)) {
      l.rule = "default path";
      l.detail = "default directory " + origin_of(found);
      return l;
    }
  }
  l.rule = "not found";
  return l;
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
  return search(name, tree, 0, found);
}

util::Result<Tree> Resolver::load(const std::string& path) {
  Tree tree;
  const auto root_path = path;
  if (m_sys.stat(root_path).type == sys::FileType::missing) return util::error(path + ": no such file");
  const auto& root = read(root_path);
  if (!root.elf) return util::error(root.error);
  if (!root.elf->has_dynamic) return util::error(path + ": not a dynamic executable");
  Object r;
  r.name = path;
  r.path = root_path;
  r.soname = root.elf->soname;
  r.found = true;
  r.elf = root.elf;
  r.lookup.rule = "path";
  tree.objects.push_back(std::move(r));
  // ld.so itself is always loaded; libc's DT_NEEDED on it resolves to it by soname.
  const auto interp = root.elf->interpreter.empty() ? m_config.interpreter : root.elf->interpreter;
  {
    Object in;
    in.name = interp;
    in.path = interp;
    in.parent = 0;
    in.lookup.rule = "interpreter";
    in.lookup.detail = root.elf->interpreter.empty() ? "the system's dynamic loader" : "PT_INTERP";
    const auto& l = read(interp);
    in.elf = l.elf;
    in.found = l.elf != nullptr;
    in.error = l.error;
    if (l.elf) in.soname = l.elf->soname;
    tree.objects.push_back(std::move(in));
  }
  // Identity of loaded files, as glibc compares st_dev/st_ino: the canonical path.
  std::map<std::string, int> by_file;
  for (std::size_t i = 0; i < tree.objects.size(); ++i)
    by_file[m_sys.canonical(tree.objects[i].path).value_or(tree.objects[i].path)] = static_cast<int>(i);
  const auto find_loaded = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < tree.objects.size(); ++i) {
      const auto& o = tree.objects[i];
      if (!o.found) continue;
      if (o.name == name || o.path == name || (!o.soname.empty() && o.soname == name)) return static_cast<int>(i);
    }
    return -1;
  };
  std::deque<int> queue = {0};
  while (!queue.empty()) {
    const int cur = queue.front();
    queue.pop_front();
    if (!tree.objects[static_cast<std::size_t>(cur)].elf) continue;
    const auto needed = tree.objects[static_cast<std::size_t>(cur)].elf->needed;
    for (const auto& name : needed) {
      int idx = find_loaded(name);
      if (idx < 0) {
        std::string found;
        auto lookup = search(name, tree, cur, found);
        if (!found.empty()) {
          const auto real = m_sys.canonical(found).value_or(found);
          if (const auto it = by_file.find(real); it != by_file.end()) {
            idx = it->second;  // the same file under another name
          } else {
            Object o;
            o.name = name;
            o.path = found;
            o.parent = cur;
            o.lookup = std::move(lookup);
            o.found = true;
            const auto& l = read(found);
            o.elf = l.elf;
            o.error = l.error;
            if (l.elf) o.soname = l.elf->soname;
            tree.objects.push_back(std::move(o));
            idx = static_cast<int>(tree.objects.size() - 1);
            by_file[real] = idx;
            queue.push_back(idx);
          }
        } else {
          Object o;
          o.name = name;
          o.parent = cur;
          o.lookup = std::move(lookup);
          tree.objects.push_back(std::move(o));
          idx = static_cast<int>(tree.objects.size() - 1);
        }
      }
      tree.objects[static_cast<std::size_t>(cur)].needs.emplace_back(name, idx);
    }
  }
  // Symbol versions: each object's .gnu.version_r against what the providing object defines.
  for (auto& o : tree.objects) {
    if (!o.elf) continue;
    for (const auto& need : o.elf->version_needs) {
      const int provider = find_loaded(need.file);
      if (provider < 0 || !tree.objects[static_cast<std::size_t>(provider)].elf) continue;
      const auto& defs = tree.objects[static_cast<std::size_t>(provider)].elf->version_defs;
      for (const auto& v : need.versions)
        if (std::find(defs.begin(), defs.end(), v) == defs.end())
          o.missing_versions.push_back(
              fmt::format("{} (in {})", v, tree.objects[static_cast<std::size_t>(provider)].path));
    }
  }
  return tree;
}

}  // namespace cudoctor::ld
