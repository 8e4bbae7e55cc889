#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudoctor/sys/paths.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "fake_sys.hpp"

namespace cudoctor::sys {

TEST(Paths, NormalizeAndJoin) {
  EXPECT_EQ(normalize("/a/./b//../c/"), "/a/c");
  EXPECT_EQ(normalize("/../.."), "/");
  EXPECT_EQ(join("/usr/lib", "../lib64/x"), "/usr/lib64/x");
  EXPECT_EQ(join("/usr/lib", "/etc/x"), "/etc/x");
  EXPECT_EQ(dirname("/a/b"), "/a");
  EXPECT_EQ(dirname("/a"), "/");
  EXPECT_EQ(basename("/a/b.so.1"), "b.so.1");
}

TEST(FakeSys, CanonicalKeepsAbsoluteLinksInsideTheRoot) {
  FakeSys s;
  s.file("/usr/lib/nvidia/current/libcuda.so.535.1", "x")
      .link("/usr/lib/nvidia/current/libcuda.so.1", "libcuda.so.535.1")
      .link("/etc/alternatives/libcuda", "/usr/lib/nvidia/current/libcuda.so.1")
      .link("/usr/lib/libcuda.so.1", "/etc/alternatives/libcuda");
  EXPECT_EQ(*s.canonical("/usr/lib/libcuda.so.1"), "/usr/lib/nvidia/current/libcuda.so.535.1");
  EXPECT_EQ(*s.read_file("/usr/lib/libcuda.so.1"), "x");
}

TEST(FakeSys, LoopsAndDanglingLinksAreErrors) {
  FakeSys s;
  s.link("/a", "/b").link("/b", "/a").link("/c", "/missing");
  EXPECT_FALSE(s.canonical("/a"));
  EXPECT_FALSE(s.canonical("/c"));
  EXPECT_EQ(s.stat("/a").type, FileType::missing);
  EXPECT_EQ(s.stat("/a", false).type, FileType::symlink);
}

TEST(FakeSys, PlantedErrorsAndRecordedReads) {
  FakeSys s;
  s.file("/proc/driver/nvidia/version", "x").fail("/proc/driver/nvidia/version", "Permission denied");
  const auto r = s.read_file("/proc/driver/nvidia/version");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "/proc/driver/nvidia/version: Permission denied");
  EXPECT_TRUE(s.reads().count("/proc/driver/nvidia/version"));
  EXPECT_EQ(*s.list_dir("/proc/driver"), std::vector<std::string>{"nvidia"});
}

class RootSysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cudoctor-sys-XXXXXX";
    ASSERT_TRUE(::mkdtemp(tmpl));
    m_dir = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }
  std::filesystem::path m_dir;
};

TEST_F(RootSysTest, AbsoluteLinksResolveInsideTheRoot) {
  std::filesystem::create_directories(m_dir / "etc");
  std::ofstream(m_dir / "etc/real") << "inside";
  std::filesystem::create_symlink("/etc/real", m_dir / "etc/link");
  const auto sys = make_root_sys(m_dir.string());
  EXPECT_EQ(*sys->read_file("/etc/link"), "inside");
  EXPECT_EQ(*sys->canonical("/etc/link"), "/etc/real");
  EXPECT_EQ(sys->stat("/etc/link").type, FileType::regular);
  EXPECT_EQ(sys->stat("/etc/link", false).type, FileType::symlink);
  EXPECT_EQ(*sys->read_link("/etc/link"), "/etc/real");
  EXPECT_FALSE(sys->is_live());
}

TEST_F(RootSysTest, RefusesFifosAndOversizedFiles) {
  ::mkfifo((m_dir / "fifo").c_str(), 0644);
  std::ofstream(m_dir / "big") << std::string(100, 'x');
  const auto sys = make_root_sys(m_dir.string());
  const auto fifo = sys->read_file("/fifo");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error(), "/fifo: not a regular file");
  EXPECT_FALSE(sys->read_file("/big", 10));
  EXPECT_FALSE(sys->read_file("/big", 99));
  ASSERT_TRUE(sys->read_file("/big", 100));
  EXPECT_EQ(*sys->read_file("/big", 100), std::string(100, 'x'));
}

// A regular file is read into a string of the size fstat gave; one of several 64 KiB reads'
// worth comes back whole, byte for byte, and /proc's files (size 0) still read to their end.
TEST_F(RootSysTest, ReadsFilesOfKnownAndUnknownSizeWhole) {
  std::string text;
  for (int i = 0; text.size() < 300000; ++i) text += std::to_string(i) + '\n';
  std::ofstream(m_dir / "long") << text;
  const auto sys = make_root_sys(m_dir.string());
  const auto r = sys->read_file("/long", text.size());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(*r, text);
  EXPECT_FALSE(sys->read_file("/long", text.size() - 1));
  const auto live = make_root_sys("/");
  const auto self = live->read_file("/proc/self/status");
  ASSERT_TRUE(self) << self.error();
  EXPECT_NE(self->find("\nPid:"), std::string::npos);
  EXPECT_EQ(self->back(), '\n');
}

TEST_F(RootSysTest, ALinkThatDanglesInsideTheRootNeverOpensTheHostsFile) {
  // /etc/hostname exists on this host; inside the root the link to it dangles.
  std::filesystem::create_directories(m_dir / "etc");
  std::filesystem::create_symlink("/etc/hostname", m_dir / "etc/host-link");
  std::filesystem::create_symlink("/etc/self", m_dir / "etc/self");
  std::filesystem::create_symlink("../../../../../../etc/passwd", m_dir / "etc/up");
  std::ofstream(m_dir / "etc/passwd") << "inside\n";
  const auto sys = make_root_sys(m_dir.string());
  const auto read = sys->read_file("/etc/host-link");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error(), "/etc/host-link: dangling symbolic link");
  EXPECT_FALSE(sys->map_file("/etc/host-link"));
  EXPECT_FALSE(sys->canonical("/etc/host-link"));
  EXPECT_EQ(sys->stat("/etc/host-link").type, FileType::missing);
  EXPECT_EQ(sys->stat("/etc/host-link", false).type, FileType::symlink);
  EXPECT_FALSE(sys->list_dir("/etc/host-link"));
  const auto loop = sys->read_file("/etc/self");
  ASSERT_FALSE(loop);
  EXPECT_EQ(loop.error(), "/etc/self: Too many levels of symbolic links");
  // ".." stops at the root, as in a chroot.
  EXPECT_EQ(*sys->read_file("/etc/up"), "inside\n");
  EXPECT_EQ(*sys->canonical("/etc/up"), "/etc/passwd");
}

TEST_F(RootSysTest, DeviceNodesAreNeverOpened) {
  const auto sys = make_root_sys("/");
  // /dev/tty would become our controlling terminal if opened; /dev/zero would never end.
  for (const char* dev : {"/dev/tty", "/dev/zero", "/dev/null"}) {
    const auto r = sys->read_file(dev);
    ASSERT_FALSE(r) << dev;
    EXPECT_EQ(r.error(), std::string(dev) + ": not a regular file");
  }
}

TEST_F(RootSysTest, AFileThatShrinksWhileMappedReadsAsZerosNotSigbus) {
  const auto path = m_dir / "lib.so";
  std::ofstream(path) << std::string(64 * 4096, 'x');
  const auto sys = make_root_sys(m_dir.string());
  auto blob = sys->map_file("/lib.so");
  ASSERT_TRUE(blob);
  const auto& b = **blob;
  EXPECT_EQ(b.data()[10 * 4096], 'x');
  EXPECT_FALSE(b.shrank());
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);  // as `cp new.so lib.so` does to a library being read
  EXPECT_EQ(b.data()[100], 'x');
  EXPECT_EQ(b.data()[20 * 4096], 0);  // past the new end: a zero, not SIGBUS
  EXPECT_EQ(b.data()[63 * 4096 + 5], 0);
  EXPECT_TRUE(b.shrank());
}

TEST(RootSys, ARelativeRootIsTakenFromTheWorkingDirectory) {
  char tmpl[] = "/tmp/cudoctor-rel-XXXXXX";
  ASSERT_TRUE(::mkdtemp(tmpl));
  const std::filesystem::path dir = tmpl;
  std::filesystem::create_directories(dir / "img/etc");
  std::ofstream(dir / "img/etc/os-release") << "ID=rel\n";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const auto sys = make_root_sys("img");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(*sys->read_file("/etc/os-release"), "ID=rel\n");
  std::filesystem::remove_all(dir);
}

}  // namespace cudoctor::sys
