#pragma once
// The dynamic loader's search, as glibc's elf/dl-load.c performs it, over a Sys root:
// DT_RPATH (only of objects without DT_RUNPATH, inherited up the chain of loaders, then the
// executable's), LD_LIBRARY_PATH, DT_RUNPATH (the requesting object's only), /etc/ld.so.cache,
// the default directories; DF_1_NODEFLIB; $ORIGIN, $LIB, $PLATFORM; glibc-hwcaps and legacy
// hwcap subdirectories; objects already loaded (by name, soname or same file); files of the
// wrong class or machine skipped. Every answer says which rule found it and what was passed
// over on the way. It never prints; the renderer draws the tree.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/ld/ld_so_cache.hpp"
#include "cudoctor/sys/sys.hpp"

namespace cudoctor::ld {

struct Config {
  std::vector<std::string> ld_library_path;  // directories, in order
  std::vector<std::string> system_dirs;      // the default path
  std::vector<std::string> hwcaps_subdirs;   // "glibc-hwcaps/x86-64-v3", best first, supported only
  std::vector<std::string> legacy_subdirs;   // "tls/x86_64", … (glibc before 2.37)
  std::string lib = "lib64";                 // $LIB
  std::string platform = "x86_64";           // $PLATFORM
  std::string cache_path = "/etc/ld.so.cache";
  std::string interpreter = "/lib64/ld-linux-x86-64.so.2";
  std::string glibc_version;  // "2.36", "" unknown
  // The current directory of the process being modelled: ld.so opens a relative path (a
  // DT_NEEDED name with a '/', a relative or empty search-path entry) from it. "/" under a
  // --root, where no process of the inspected tree has a current directory.
  std::string cwd = "/";
};

// The loader configuration of the root sys reads: its glibc (version, multiarch layout), the
// CPU's x86-64 levels and $PLATFORM, the given LD_LIBRARY_PATH, and, on the live machine, this
// process's current directory (/proc/self/cwd).
Config discover_config(const sys::Sys& sys, const std::string& ld_library_path);

struct Rejected {
  std::string path;
  std::string why;  // "wrong ELF class: ELFCLASS32", "not an ELF file: …"
};

// How a needed name was found.
struct Lookup {
  std::string rule;                   // "already loaded", "path", "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH",
                                      // "ld.so.cache", "default path", "interpreter", "not found"
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

class Resolver {
 public:
  Resolver(const sys::Sys& sys, Config config);
  const Config& config() const { return m_config; }

  // Loads a file and everything it needs, as ld.so would; an error when the file itself
  // cannot be read or is not a usable ELF file.
  util::Result<Tree> load(const std::string& path);

  // Where dlopen(name) from a program without DT_RPATH or DT_RUNPATH would find a library:
  // LD_LIBRARY_PATH, ld.so.cache, the default path. found is "" when it would not.
  Lookup locate(const std::string& name, std::string& found, bool is_64 = true, std::uint16_t machine = 62);

  // The ld.so.cache in use (parsed once); an error message when it could not be read.
  const LdSoCache* cache() const;
  const std::string& cache_error() const { return m_cache_error; }

 private:
  struct Loaded {
    std::shared_ptr<const elf::ElfFile> elf;
    std::string error;
  };
  const Loaded& read(const std::string& path);
  std::optional<std::string> verify(const std::string& path, const elf::ElfFile& main, std::string& why);
  Lookup search(const std::string& name, const Tree& tree, int requester, std::string& found_path);
  bool search_dirs(const std::string& name, const std::vector<std::string>& dirs, const elf::ElfFile& main, Lookup& l,
                   std::string& found);
  std::vector<std::string> expand(const std::string& list, const Object& owner) const;

  const sys::Sys& m_sys;
  Config m_config;
  std::map<std::string, Loaded> m_files;
  mutable std::optional<LdSoCache> m_cache;
  mutable std::string m_cache_error;
  mutable bool m_cache_read = false;
};

}  // namespace cudoctor::ld
