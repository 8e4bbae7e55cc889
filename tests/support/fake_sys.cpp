#include "fake_sys.hpp"

#include "cudoctor/sys/paths.hpp"

namespace cudoctor::sys {

FakeSys& FakeSys::file(std::string path, std::string content, std::uint32_t mode) {
  path = normalize(path);
  dir(dirname(path));
  Node n;
  n.st.type = FileType::regular;
  n.st.mode = mode;
  n.st.size = content.size();
  n.content = std::move(content);
  m_nodes[path] = std::move(n);
  return *this;
}

FakeSys& FakeSys::link(std::string path, std::string target) {
  path = normalize(path);
  dir(dirname(path));
  Node n;
  n.st.type = FileType::symlink;
  n.st.mode = 0777;
  n.content = std::move(target);
  m_nodes[path] = std::move(n);
  return *this;
}

FakeSys& FakeSys::dir(std::string path) {
  path = normalize(path);
  for (auto p = path;; p = dirname(p)) {
    auto& n = m_nodes[p];
    if (n.st.type == FileType::missing) {
      n.st.type = FileType::directory;
      n.st.mode = 0755;
    }
    if (p == "/") break;
  }
  return *this;
}

FakeSys& FakeSys::device(std::string path, std::uint32_t major, std::uint32_t minor, std::uint32_t mode,
                         std::uint32_t uid, std::uint32_t gid) {
  path = normalize(path);
  dir(dirname(path));
  Node n;
  n.st.type = FileType::char_device;
  n.st.mode = mode;
  n.st.uid = uid;
  n.st.gid = gid;
  n.st.rdev_major = major;
  n.st.rdev_minor = minor;
  m_nodes[path] = std::move(n);
  return *this;
}

FakeSys& FakeSys::fail(std::string path, std::string error) {
  m_errors[normalize(path)] = std::move(error);
  return *this;
}

FakeSys& FakeSys::set_env(std::string name, std::string value) {
  m_env[std::move(name)] = std::move(value);
  return *this;
}

FakeSys& FakeSys::set_identity(Identity id) {
  m_identity = std::move(id);
  return *this;
}

const FakeSys::Node* FakeSys::find(const std::string& path) const {
  const auto it = m_nodes.find(path);
  return it == m_nodes.end() ? nullptr : &it->second;
}

util::Result<std::string> FakeSys::read_file(std::string_view path, std::size_t max_bytes) const {
  auto c = canonical(path);
  if (!c) return util::error(std::string(path) + ": No such file or directory");
  m_reads.insert(*c);
  if (const auto e = m_errors.find(*c); e != m_errors.end()) return util::error(std::string(path) + ": " + e->second);
  const Node* n = find(*c);
  if (n->st.type == FileType::directory) return util::error(std::string(path) + ": is a directory");
  if (n->st.type != FileType::regular) return util::error(std::string(path) + ": not a regular file");
  if (n->content.size() > max_bytes)
    return util::error(std::string(path) + ": larger than " + std::to_string(max_bytes) + " bytes");
  return n->content;
}

namespace {
class StringBlob final : public Blob {
 public:
  StringBlob(std::string s, bool shrank) : m_s(std::move(s)), m_shrank(shrank) {}
  const unsigned char* data() const override { return reinterpret_cast<const unsigned char*>(m_s.data()); }
  std::size_t size() const override { return m_s.size(); }
  bool shrank() const override { return m_shrank; }

 private:
  std::string m_s;
  bool m_shrank;
};
}  // namespace

util::Result<std::shared_ptr<const Blob>> FakeSys::map_file(std::string_view path) const {
  auto r = read_file(path, std::size_t{1} << 40);
  if (!r) return util::error(r.error());
  const bool shrank = m_shrinking.count(canonical(path).value_or(std::string(path))) > 0;
  return std::shared_ptr<const Blob>(std::make_shared<StringBlob>(std::move(r).value(), shrank));
}

util::Result<std::vector<std::string>> FakeSys::list_dir(std::string_view path) const {
  auto c = canonical(path);
  if (!c) return util::error(std::string(path) + ": No such file or directory");
  m_reads.insert(*c);
  if (const auto e = m_errors.find(*c); e != m_errors.end()) return util::error(std::string(path) + ": " + e->second);
  if (find(*c)->st.type != FileType::directory) return util::error(std::string(path) + ": Not a directory");
  const auto prefix = *c == "/" ? std::string("/") : *c + "/";
  std::vector<std::string> names;
  for (auto it = m_nodes.lower_bound(prefix); it != m_nodes.end() && it->first.starts_with(prefix); ++it) {
    const auto rest = it->first.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) names.push_back(rest);
  }
  return names;
}

util::Result<std::string> FakeSys::read_link(std::string_view path) const {
  const auto p = normalize(path);
  const Node* n = find(p);
  if (!n || n->st.type != FileType::symlink) return util::error(p + ": not a symbolic link");
  return n->content;
}

FileStat FakeSys::stat(std::string_view path, bool follow) const {
  std::string p = normalize(path);
  if (follow) {
    auto c = canonical(p);
    if (!c) return {};
    p = *c;
  }
  if (const auto e = m_errors.find(p); e != m_errors.end()) {
    FileStat st;
    if (const Node* n = find(p)) st = n->st;
    return st;
  }
  const Node* n = find(p);
  return n ? n->st : FileStat{};
}

std::vector<std::string> FakeSys::env_names() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : m_env) names.push_back(name);
  return names;
}

std::optional<std::string> FakeSys::env(std::string_view name) const {
  const auto it = m_env.find(std::string(name));
  if (it == m_env.end()) return std::nullopt;
  return it->second;
}

}  // namespace cudoctor::sys
