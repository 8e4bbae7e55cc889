#pragma once
// A machine's file tree built on disk for one test, deleted afterwards. Paths are logical
// ("/proc/modules"); the builder puts them under the fixture's own directory.
#include <cstdint>
#include <filesystem>
#include <string>

namespace cudoctor::testing {

class FixtureRoot {
 public:
  FixtureRoot();  // a fresh directory under the test temp dir, world-readable
  ~FixtureRoot();
  FixtureRoot(const FixtureRoot&) = delete;
  FixtureRoot& operator=(const FixtureRoot&) = delete;

  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path host(const std::string& logical) const;

  FixtureRoot& file(const std::string& logical, const std::string& content, unsigned mode = 0644);
  FixtureRoot& dir(const std::string& logical);
  FixtureRoot& link(const std::string& logical, const std::string& target);
  // Copies (hard-links when it can) a file of this machine into the fixture.
  FixtureRoot& copy(const std::string& logical, const std::filesystem::path& from);
  // A character device node; false when this process may not create one (not root).
  bool char_device(const std::string& logical, unsigned major, unsigned minor, unsigned mode, unsigned uid = 0,
                   unsigned gid = 0);
  FixtureRoot& fifo(const std::string& logical);

 private:
  std::filesystem::path m_path;
};

// Whether this process can create device nodes (root, not in a user namespace that forbids it).
bool can_make_device_nodes();
// Skips the test (with its reason) where device nodes cannot be made.
#define REQUIRE_DEVICE_NODES() \
  if (!cudoctor::testing::can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)"

}  // namespace cudoctor::testing
