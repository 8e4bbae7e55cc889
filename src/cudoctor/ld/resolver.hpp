#pragma once
// The dynamic loader's search, as glibc's elf/dl-load.c performs it, over a Sys root:
// DT_RPATH (only of objects without DT_RUNPATH, inherited up the chain of loaders, then the
// executable's), LD_LIBRARY_PATH, DT_RUNPATH (the requesting object's only), /etc/ld.so.cache,
// the default directories; DF_1_NODEFLIB; $ORIGIN, $LIB, $PLATFORM; glibc-hwcaps and legacy
// hwcap subdirectories; objects already loaded (by name, soname or same file); files of the
// wrong class or machine skipped. Every answer says which rule found it and what was passed
// over on the way. It never prints; the renderer draws the tree.
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/ld/ld_so_cache.hpp"
#include "cudoctor/ld/model.hpp"
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

// What ld.so reads of a file (elf::Headers::loader), read at offsets through f.
util::Result<elf::ElfFile> read_loader_headers(const sys::Reader& f);

class Resolver {
 public:
  Resolver(const sys::Sys& sys, Config config);
  // Not copied: the cache's index points into the cache it holds.
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;
  Resolver(Resolver&&) = default;

  // A tree's objects so far by the names a DT_NEEDED entry matches (the name each was asked
  // for, its path, its soname): each name's first object.
  using Names = std::unordered_map<std::string, int>;
  const Config& config() const { return m_config; }

  // Loads a file and everything it needs, as ld.so would; an error when the file itself
  // cannot be read or is not a usable ELF file.
  util::Result<Tree> load(const std::string& path);

  // Where dlopen(name) from a program without DT_RPATH or DT_RUNPATH would find a library:
  // LD_LIBRARY_PATH, ld.so.cache, the default path. found is "" when it would not.
  Lookup locate(const std::string& name, std::string& found, bool is_64 = true, std::uint16_t machine = 62);

  // Where dlopen(name), called from the tree's object requester, finds a library: searched as a
  // DT_NEEDED name of that object is (its RUNPATH, LD_LIBRARY_PATH, the cache, the default path).
  // found is "" when it would not.
  Lookup locate_from(const Tree& tree, int requester, const std::string& name, std::string& found);

  // The ld.so.cache in use (parsed once); an error message when it could not be read.
  const LdSoCache* cache() const;
  const std::string& cache_error() const { return m_cache_error; }

 private:
  struct Loaded {
    std::shared_ptr<const elf::ElfFile> elf;
    std::string error;
    std::string identity;  // Reader::identity: "dev:ino", "" when the Sys cannot tell
  };
  // A file one search stage settled on, with the rule and its detail.
  struct Found {
    std::string path;
    Rule rule = Rule::not_found;
    std::string detail;
  };
  // A search's answer: the lookup with its reasons, and the path; "" when not found.
  struct Searched {
    Lookup lookup;
    std::string path;
  };
  const Loaded& read(const std::string& path);
  std::optional<std::string> unusable(const std::string& path, const elf::ElfFile& main);
  Searched search(const std::string& name, const Tree& tree, int requester);
  Searched search_uncached(const std::string& name, const Tree& tree, int requester);
  std::string search_key(const std::string& name, const Tree& tree, int requester) const;
  // The search stages, in ld.so's order; each adds what it looked at to trail.
  std::optional<Found> by_path(const std::string& name, const Object& loader, const elf::ElfFile& main, Lookup& trail);
  std::optional<Found> from_rpath(const std::string& name, const Tree& tree, int requester, Lookup& trail);
  std::optional<Found> from_ld_library_path(const std::string& name, const elf::ElfFile& main, Lookup& trail);
  std::optional<Found> from_runpath(const std::string& name, const Object& loader, const elf::ElfFile& main,
                                    Lookup& trail);
  std::optional<Found> from_cache(const std::string& name, const elf::ElfFile& main, Lookup& trail);
  std::optional<Found> from_default_path(const std::string& name, const elf::ElfFile& main, Lookup& trail);
  std::optional<std::string> search_dirs(const std::string& name, const std::vector<std::string>& dirs,
                                         const elf::ElfFile& main, Lookup& trail);
  std::vector<std::string> expand(const std::string& list, const Object& owner) const;
  // A directory searched: stat-ed once; its entries read once it is asked about often (see
  // listing.cpp), so that a search asks the listing instead of stat-ing every candidate (one
  // ldd of a CUDA library made thousands of failing stats).
  struct Listing {
    bool dir = false;                                // it is a directory
    bool listed = false;                             // names holds its entries
    bool unlistable = false;                         // it could not be read (execute-only): searched by stat
    int asked = 0;                                   // names looked up so far
    std::unordered_map<std::string, bool> known;     // each name's answer, once found
    std::vector<std::string> names;                  // sorted
    std::optional<std::vector<std::string>> places;  // see places(), once worked out
  };
  Listing& listing(const std::string& dir);
  // Where in a directory a search looks, best first: its glibc-hwcaps and legacy hwcap
  // subdirectories that exist, then the directory itself; worked out once per directory.
  const std::vector<std::string>& places(const std::string& dir);
  // Whether dir/name may exist: a listed directory's entries decide (a dangling link among them
  // is found out when it fails to open), an unlisted one's a stat.
  bool may_exist(const std::string& dir, const std::string& name);
  // Whether a path is there, and its canonical path (identity()'s fallback): each asked of the
  // system once per path per run (an ldd over 36 libraries asked for libc.so.6 in every tree).
  bool there(const std::string& path);
  const std::string& canonical(const std::string& path);
  // A file's identity, as ld.so tells whether a file is already loaded: its device and inode
  // from the descriptor it was read through (no stat or readlink of its own), else its
  // canonical path.
  const std::string& identity(const std::string& path);
  // load()'s steps: the root and its interpreter; one DT_NEEDED name of requester, returning
  // the index of the object that satisfies it.
  util::Result<Tree> start_tree(const std::string& path);
  int add_needed(Tree& tree, int requester, const std::string& name, Names& by_file, Names& names,
                 std::deque<int>& queue);

  const sys::Sys& m_sys;
  Config m_config;
  // Hashed, not ordered: an ldd of libtorch asks them tens of thousands of times. Their
  // elements stay where they are as they grow (listing() hands out references).
  std::unordered_map<std::string, Loaded> m_files;
  std::unordered_map<std::string, Listing> m_listings;
  std::unordered_map<std::string, bool> m_there;
  std::unordered_map<std::string, std::string> m_canonical;
  std::unordered_map<std::string, Searched> m_searches;  // by search_key
  mutable std::optional<LdSoCache> m_cache;
  std::optional<CacheIndex> m_cache_index;  // of *m_cache, once asked often
  int m_cache_lookups = 0;
  mutable std::string m_cache_error;
  mutable bool m_cache_read = false;
};

}  // namespace cudoctor::ld
