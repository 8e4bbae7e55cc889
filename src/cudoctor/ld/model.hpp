#pragma once
// The resolver's answer as plain data: which rule found each object, what was searched and
// passed over, and the tree of objects in load order. Renderers read it without linking the
// resolver (and so without sys/).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cudoctor/elf/elf_file.hpp"

namespace cudoctor::ld {

// How a needed name was found, in the order ld.so tries the rules (libtree's how_t).
enum class Rule {
  path,             // the name has a '/': opened as it is, no search
  rpath,            // DT_RPATH of the requester or a loader up its chain, or the executable's
  ld_library_path,  // LD_LIBRARY_PATH
  runpath,          // DT_RUNPATH of the requester
  ld_so_cache,      // /etc/ld.so.cache
  default_path,     // the default directories
  interpreter,      // PT_INTERP or the system's loader: loaded whatever is needed
  not_found,
};

// The rule as it is printed and written to JSON: "path", "DT_RPATH", "LD_LIBRARY_PATH",
// "DT_RUNPATH", "ld.so.cache", "default path", "interpreter", "not found".
inline std::string to_string(Rule r) {
  switch (r) {
    case Rule::path:
      return "path";
    case Rule::rpath:
      return "DT_RPATH";
    case Rule::ld_library_path:
      return "LD_LIBRARY_PATH";
    case Rule::runpath:
      return "DT_RUNPATH";
    case Rule::ld_so_cache:
      return "ld.so.cache";
    case Rule::default_path:
      return "default path";
    case Rule::interpreter:
      return "interpreter";
    case Rule::not_found:
      return "not found";
  }
  return "not found";
}

struct Rejected {
  std::string path;
  std::string why;  // "wrong ELF class: ELFCLASS32", "not an ELF file: …"
};

// How a needed name was found.
struct Lookup {
  Rule rule = Rule::not_found;
  std::string detail;                 // "DT_RPATH of /opt/app/bin/app: $ORIGIN/../lib", "ld.so.cache entry"
  std::vector<std::string> searched;  // directories looked in, in order, when searching
  std::vector<Rejected> rejected;
};

struct Object {
  std::string name;  // as first requested (the file given, for the root)
  std::string path;  // as loaded: what ld.so prints after "=>"; "" when not found
  std::string soname;
  int parent = -1;  // the object that caused it to be loaded
  Lookup lookup;
  bool found = false;
  std::shared_ptr<const elf::ElfFile> elf;         // null when not found or unreadable
  std::string error;                               // why the found file could not be read
  std::vector<std::pair<std::string, int>> needs;  // DT_NEEDED name -> object index
  std::vector<std::string> missing_versions;       // "GLIBCXX_3.4.32 (in libstdc++.so.6)"
};

struct Tree {
  std::vector<Object> objects;  // load order (breadth first); objects[0] is the root
};

}  // namespace cudoctor::ld
