#include "cudoctor/sys/paths.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "cudoctor/sys/sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::sys {

std::string_view to_string(FileType t) {
  switch (t) {
    case FileType::missing:
      return "missing";
    case FileType::regular:
      return "file";
    case FileType::directory:
      return "directory";
    case FileType::symlink:
      return "symlink";
    case FileType::char_device:
      return "char_device";
    case FileType::block_device:
      return "block_device";
    case FileType::fifo:
      return "fifo";
    case FileType::socket:
      return "socket";
    case FileType::other:
      return "other";
  }
  return "other";
}

std::string normalize(std::string_view path) {
  std::vector<std::string_view> parts;
  for (const auto p : util::split(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();  // ".." at the root stays at the root
      continue;
    }
    parts.push_back(p);
  }
  std::string out;
  for (const auto p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

std::string join(std::string_view dir, std::string_view name) {
  if (!name.empty() && name.front() == '/') return normalize(name);
  return normalize(std::string(dir) + "/" + std::string(name));
}

std::string dirname(std::string_view path) {
  const auto n = normalize(path);
  const auto pos = n.rfind('/');
  return pos == 0 ? "/" : n.substr(0, pos);
}

std::string basename(std::string_view path) {
  const auto n = normalize(path);
  return n.substr(n.rfind('/') + 1);
}

util::Result<std::string> canonical_with(std::string_view path,
                                         const std::function<FileStat(const std::string&)>& lstat,
                                         const std::function<util::Result<std::string>(const std::string&)>& readlink) {
  // Resolve component by component, as the kernel does, but with absolute link targets
  // taken inside the root. 40 links at most, the kernel's own limit (MAXSYMLINKS).
  std::vector<std::string> todo;
  const auto normalized = normalize(path);  // outlives the views split() returns
  for (const auto p : util::split(normalized, '/'))
    if (!p.empty()) todo.emplace_back(p);
  std::reverse(todo.begin(), todo.end());
  std::string current = "/";
  int links = 0;
  while (!todo.empty()) {
    const auto part = todo.back();
    todo.pop_back();
    if (part == "..") {
      current = dirname(current);
      continue;
    }
    const auto next = join(current, part);
    const auto st = lstat(next);
    if (st.type == FileType::missing) return util::error(next + ": no such file or directory");
    if (st.type != FileType::symlink) {
      current = next;
      continue;
    }
    if (++links > 40) return util::error(std::string(path) + ": too many levels of symbolic links");
    auto target = readlink(next);
    if (!target) return util::error(target.error());
    if (!target->empty() && target->front() == '/') current = "/";
    std::vector<std::string> more;
    for (const auto p : util::split(*target, '/'))
      if (!p.empty() && p != ".") more.emplace_back(p);
    for (auto it = more.rbegin(); it != more.rend(); ++it) todo.push_back(*it);
  }
  return current;
}

}  // namespace cudoctor::sys

namespace cudoctor::sys {
util::Result<std::string> Sys::canonical(std::string_view path) const {
  return canonical_with(
      path, [this](const std::string& p) { return stat(p, false); },
      [this](const std::string& p) { return read_link(p); });
}
}  // namespace cudoctor::sys
