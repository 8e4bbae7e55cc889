#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include "fixture_root.hpp"

namespace fs = std::filesystem;

namespace cudoctor::testing {

namespace {
fs::path temp_base() {
  if (const char* d = std::getenv("CUDOCTOR_TEST_TMPDIR"); d && *d) return d;
  return fs::temp_directory_path();
}
}  // namespace

FixtureRoot::FixtureRoot() {
  auto base = temp_base();
  fs::create_directories(base);
  std::string tmpl = (base / "cudoctor-root-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed in " + base.string());
  m_path = tmpl;
  // Readable by others: some tests run cudoctor as an unprivileged user.
  fs::permissions(m_path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
}

FixtureRoot::~FixtureRoot() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

fs::path FixtureRoot::host(const std::string& logical) const {
  return m_path / fs::path(logical).relative_path();
}

FixtureRoot& FixtureRoot::dir(const std::string& logical) {
  fs::create_directories(host(logical));
  return *this;
}

FixtureRoot& FixtureRoot::file(const std::string& logical, const std::string& content, unsigned mode) {
  const auto p = host(logical);
  fs::create_directories(p.parent_path());
  fs::remove(p);
  std::ofstream(p, std::ios::binary) << content;
  ::chmod(p.c_str(), mode);
  return *this;
}

FixtureRoot& FixtureRoot::link(const std::string& logical, const std::string& target) {
  const auto p = host(logical);
  fs::create_directories(p.parent_path());
  fs::remove(p);
  fs::create_symlink(target, p);
  return *this;
}

FixtureRoot& FixtureRoot::copy(const std::string& logical, const fs::path& from) {
  const auto p = host(logical);
  fs::create_directories(p.parent_path());
  fs::remove(p);
  std::error_code ec;
  fs::create_hard_link(from, p, ec);
  if (ec) fs::copy_file(from, p);
  return *this;
}

bool FixtureRoot::char_device(const std::string& logical, unsigned major, unsigned minor, unsigned mode, unsigned uid,
                              unsigned gid) {
  const auto p = host(logical);
  fs::create_directories(p.parent_path());
  fs::remove(p);
  if (::mknod(p.c_str(), S_IFCHR | mode, makedev(major, minor)) != 0) return false;
  ::chmod(p.c_str(), mode);
  return ::chown(p.c_str(), uid, gid) == 0;
}

FixtureRoot& FixtureRoot::fifo(const std::string& logical) {
  const auto p = host(logical);
  fs::create_directories(p.parent_path());
  fs::remove(p);
  ::mkfifo(p.c_str(), 0644);
  return *this;
}

bool can_make_device_nodes() {
  static const bool ok = [] {
    FixtureRoot r;
    return r.char_device("/dev/probe", 1, 3, 0666);
  }();
  return ok;
}

}  // namespace cudoctor::testing
