#pragma once
// FakeSys: an in-memory machine for unit tests. Directories exist implicitly above every
// file; errors can be planted on any path (e.g. "permission denied", which root cannot get
// from a real file). It records every path read.
#include <map>
#include <set>

#include "cudoctor/sys/sys.hpp"

namespace cudoctor::sys {

class FakeSys final : public Sys {
 public:
  FakeSys& file(std::string path, std::string content, std::uint32_t mode = 0644);
  FakeSys& link(std::string path, std::string target);
  FakeSys& dir(std::string path);
  FakeSys& device(std::string path, std::uint32_t major, std::uint32_t minor, std::uint32_t mode, std::uint32_t uid = 0,
                  std::uint32_t gid = 0);
  FakeSys& fail(std::string path, std::string error);  // every access to path fails with error
  // map_file of path gives a blob that shrank while it was read (the file was truncated).
  FakeSys& shrinking(std::string path) {
    m_shrinking.insert(std::move(path));
    return *this;
  }
  FakeSys& set_env(std::string name, std::string value);
  FakeSys& set_identity(Identity id);

  util::Result<std::string> read_file(std::string_view path, std::size_t max_bytes = 1 << 20) const override;
  util::Result<std::shared_ptr<const Blob>> map_file(std::string_view path) const override;
  util::Result<std::vector<std::string>> list_dir(std::string_view path) const override;
  util::Result<std::string> read_link(std::string_view path) const override;
  FileStat stat(std::string_view path, bool follow = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  std::vector<std::string> env_names() const override;
  Identity identity() const override { return m_identity; }
  std::string host_path(std::string_view logical) const override { return std::string(logical); }
  bool is_live() const override { return false; }

  const std::set<std::string>& reads() const { return m_reads; }

 private:
  struct Node {
    FileStat st;
    std::string content;  // file content or link target
  };
  const Node* find(const std::string& path) const;

  std::map<std::string, Node> m_nodes;
  std::map<std::string, std::string> m_errors;
  std::map<std::string, std::string> m_env;
  Identity m_identity;
  mutable std::set<std::string> m_reads;
  std::set<std::string> m_shrinking;
};

}  // namespace cudoctor::sys
