#pragma once
// Sys: the one door to the machine. Every probe reads files, the environment, the user's
// identity and runs programs through it, so every probe runs on a fixture root (--root).
// Paths given to and returned by Sys are logical ("/proc/modules"), never the host path of
// a fixture. Sys only reads: it runs no program, so nothing of the examined tree executes.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/util/result.hpp"

namespace cudoctor::sys {

// The bytes of a file, mapped read-only (or held in memory by FakeSys).
class Blob {
 public:
  virtual ~Blob() = default;
  virtual const unsigned char* data() const = 0;
  virtual std::size_t size() const = 0;
  // True when the file shrank while it was mapped: the pages past its new end read as
  // zeros instead of raising SIGBUS, and what was parsed from them is not to be trusted.
  virtual bool shrank() const { return false; }
  // The caller is done with bytes [offset, offset + n): a mapping gives their pages back, so
  // that scanning a large file in windows keeps only a window resident. Reading them again
  // is still allowed (the pages come back from the file).
  virtual void release(std::size_t /*offset*/, std::size_t /*n*/) const {}
};

// A regular file opened for reads at offsets: a parser's few ranges of a large file, without
// mapping it (a mapping's page faults and unmapping cost more than the reads).
class Reader {
 public:
  virtual ~Reader() = default;
  virtual std::uint64_t size() const = 0;
  // Up to n bytes at offset into buf: the count read (less only at the file's end), or an error.
  virtual util::Result<std::size_t> read_at(std::uint64_t offset, unsigned char* buf, std::size_t n) const = 0;
  // True when the file shrank while it was read (see Blob::shrank).
  virtual bool shrank() const { return false; }
  // The file's identity as the loader compares files (st_dev and st_ino, so a hard link is the
  // same file): "dev:ino"; "" when this reader cannot tell, and the caller compares canonical
  // paths instead.
  virtual const std::string& identity() const {
    static const std::string none;
    return none;
  }
};

enum class FileType { missing, regular, directory, symlink, char_device, block_device, fifo, socket, other };

std::string_view to_string(FileType t);

struct FileStat {
  FileType type = FileType::missing;
  std::uint32_t mode = 0;  // permission bits (07777)
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint32_t rdev_major = 0;  // device nodes only
  std::uint32_t rdev_minor = 0;
  std::uint64_t size = 0;  // bytes; 0 for most /proc and /sys files
  std::string error;       // why type is missing when the path exists but cannot be examined
};

struct Identity {
  std::uint32_t uid = 0;  // effective ids: what the kernel checks on open()
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> groups;  // supplementary groups
  std::string user_name;              // from the password database, "" if unknown
};

class Sys {
 public:
  virtual ~Sys() = default;

  // Reads a whole regular file, at most max_bytes (a longer file is an error). Refuses
  // fifos and devices so a hostile tree cannot make a probe block.
  virtual util::Result<std::string> read_file(std::string_view path, std::size_t max_bytes = 1 << 20) const = 0;
  // Maps a whole regular file read-only (binaries: ELF, ld.so.cache). Refuses other file
  // types like read_file.
  virtual util::Result<std::shared_ptr<const Blob>> map_file(std::string_view path) const = 0;
  // Opens a regular file for reads at offsets; refuses other file types like read_file. By
  // default the reads come from map_file.
  virtual util::Result<std::unique_ptr<const Reader>> open_reader(std::string_view path) const;
  // Names in a directory, sorted, without "." and "..".
  virtual util::Result<std::vector<std::string>> list_dir(std::string_view path) const = 0;
  // The target of a symbolic link, as written in the link.
  virtual util::Result<std::string> read_link(std::string_view path) const = 0;
  // stat (follow = true) or lstat of a path; type missing when it does not exist.
  virtual FileStat stat(std::string_view path, bool follow = true) const = 0;
  virtual std::optional<std::string> env(std::string_view name) const = 0;
  // The names of every variable in the environment, sorted.
  virtual std::vector<std::string> env_names() const = 0;
  virtual Identity identity() const = 0;
  // The path a logical path has on this host: the root prefix prepended. Only for handing a
  // file to something outside Sys (a child process that dlopens it).
  virtual std::string host_path(std::string_view logical) const = 0;
  // True when the root is the machine itself ("/"), false for a fixture or mounted image.
  virtual bool is_live() const = 0;

  // Follows symbolic links inside the root (absolute targets stay inside it) and returns the
  // logical canonical path, or an error for a dangling link or a loop.
  virtual util::Result<std::string> canonical(std::string_view path) const;
  bool exists(std::string_view path) const { return stat(path).type != FileType::missing; }
};

}  // namespace cudoctor::sys
