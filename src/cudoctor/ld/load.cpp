// Resolver::load: the tree of a file and everything it needs, breadth first as ld.so loads
// them (glibc's _dl_map_object_deps), each DT_NEEDED name matched against the objects
// already loaded before it is searched for.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "cudoctor/ld/resolver.hpp"

namespace cudoctor::ld {

namespace {
// Adds object idx under the names a later DT_NEEDED may match it by: the name it was asked
// for, its path and its soname; an earlier object keeps a name it already has.
void index_object(const Tree& tree, int idx, Resolver::Names& names) {
  const auto& o = tree.objects[static_cast<std::size_t>(idx)];
  if (!o.found) return;
  names.emplace(o.name, idx);
  names.emplace(o.path, idx);
  if (!o.soname.empty()) names.emplace(o.soname, idx);
}

// An object already loaded that satisfies name (by the name it was asked for, its path or
// its soname), the first such; -1 when none.
int find_loaded(const Resolver::Names& names, const std::string& name) {
  const auto it = names.find(name);
  return it == names.end() ? -1 : it->second;
}

// Symbol versions: each object's .gnu.version_r against what the providing object defines.
void check_versions(Tree& tree, const Resolver::Names& names) {
  for (auto& o : tree.objects) {
    if (!o.elf) continue;
    for (const auto& need : o.elf->version_needs) {
      const int provider = find_loaded(names, need.file);
      if (provider < 0 || !tree.objects[static_cast<std::size_t>(provider)].elf) continue;
      const auto& p = tree.objects[static_cast<std::size_t>(provider)];
      for (const auto& v : need.versions)
        if (std::find(p.elf->version_defs.begin(), p.elf->version_defs.end(), v) == p.elf->version_defs.end())
          o.missing_versions.push_back(fmt::format("{} (in {})", v, p.path));
    }
  }
}
}  // namespace

util::Result<Tree> Resolver::start_tree(const std::string& path) {
  const auto root = read(path).elf;
  if (!root) return util::error(there(path) ? read(path).error : path + ": no such file");
  if (!root->has_dynamic) return util::error(path + ": not a dynamic executable");
  Tree tree;
  Object r;
  r.name = path;
  r.path = path;
  r.soname = root->soname;
  r.found = true;
  r.elf = root;
  r.lookup.rule = Rule::path;
  tree.objects.push_back(std::move(r));
  // ld.so itself is always loaded; libc's DT_NEEDED on it resolves to it by soname.
  const auto interp = root->interpreter.empty() ? m_config.interpreter : root->interpreter;
  Object in;
  in.name = interp;
  in.path = interp;
  in.parent = 0;
  in.lookup.rule = Rule::interpreter;
  in.lookup.detail = root->interpreter.empty() ? "the system's dynamic loader" : "PT_INTERP";
  const auto& l = read(interp);
  in.elf = l.elf;
  in.found = l.elf != nullptr;
  in.error = l.error;
  if (l.elf) in.soname = l.elf->soname;
  tree.objects.push_back(std::move(in));
  return tree;
}

int Resolver::add_needed(Tree& tree, int requester, const std::string& name, Names& by_file, Names& names,
                         std::deque<int>& queue) {
  if (const int idx = find_loaded(names, name); idx >= 0) return idx;
  auto s = search(name, tree, requester);
  const std::string real = s.path.empty() ? "" : identity(s.path);
  if (const auto it = by_file.find(real); !s.path.empty() && it != by_file.end())
    return it->second;  // the same file under another name
  Object o;
  o.name = name;
  o.parent = requester;
  o.lookup = std::move(s.lookup);
  if (!s.path.empty()) {
    o.path = s.path;
    o.found = true;
    const auto& l = read(s.path);
    o.elf = l.elf;
    o.error = l.error;
    if (l.elf) o.soname = l.elf->soname;
  }
  tree.objects.push_back(std::move(o));
  const int idx = static_cast<int>(tree.objects.size() - 1);
  if (!s.path.empty()) {
    by_file[real] = idx;
    index_object(tree, idx, names);
    queue.push_back(idx);
  }
  return idx;
}

util::Result<Tree> Resolver::load(const std::string& path) {
  auto started = start_tree(path);
  if (!started) return util::error(started.error());
  auto tree = std::move(started).value();
  // Loaded files by identity (st_dev and st_ino, as glibc compares them).
  Names by_file;
  Names names;
  for (std::size_t i = 0; i < tree.objects.size(); ++i) {
    by_file[identity(tree.objects[i].path)] = static_cast<int>(i);
    index_object(tree, static_cast<int>(i), names);
  }
  std::deque<int> queue = {0};
  while (!queue.empty()) {
    const auto cur = static_cast<std::size_t>(queue.front());
    queue.pop_front();
    if (!tree.objects[cur].elf) continue;
    const auto elf = tree.objects[cur].elf;  // held: objects grows below
    for (const auto& name : elf->needed) {
      const int idx = add_needed(tree, static_cast<int>(cur), name, by_file, names, queue);
      tree.objects[cur].needs.emplace_back(name, idx);
    }
  }
  check_versions(tree, names);
  return tree;
}

}  // namespace cudoctor::ld
