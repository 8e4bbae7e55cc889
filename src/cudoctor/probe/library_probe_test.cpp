#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {

// An ELF header of class ELFCLASS32 (i386 shared object) and nothing else: enough for the
// loader to pass it over for its class.
std::string elf32_header() {
  std::string h(52, '\0');
  h.replace(0, 7,
            "\x7f"
            "ELF\x01\x01\x01");
  h[16] = 3;  // ET_DYN
  h[18] = 3;  // EM_386
  return h;
}

TEST(LibraryProbe, DriverLibrariesTheLoaderDoesNotTake) {
  sys::FakeSys s;
  const std::string multiarch = "/usr/lib/x86_64-linux-gnu";
  s.link(multiarch + "/libcuda.so.1", "libcuda.so.535.104.05");  // its target was removed
  s.file(multiarch + "/libnvidia-ml.so.1", elf32_header());
  s.file("/usr/lib/libcuda.so.1", "INPUT(libcuda.so.535.104.05)\n");
  s.file("/usr/local/nvidia/lib64/libcuda.so.1",
         "\x7f"
         "ELF");
  s.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  s.file("/etc/ld.so.conf.d/nvidia.conf", "# installed by the driver\n/opt/nvidia/lib  # no cache entry\n");
  s.file("/etc/ld.so.conf.d/nvidia.conf.bak", "/opt/ignored\n");
  s.file("/opt/nvidia/lib/libnvidia-ml.so.1",
         "\x7f"
         "ELF");
  s.file("/opt/ignored/libnvidia-ml.so.1",
         "\x7f"
         "ELF");
  Context ctx(s, {});
  const auto libs = probe_driver_libraries(ctx, {});
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0].path, "");
  ASSERT_EQ(libs[0].candidates.size(), 3u);
  EXPECT_EQ(libs[0].candidates[0],
            (snapshot::LibraryCandidate{multiarch + "/libcuda.so.1", "dangling", "libcuda.so.535.104.05", ""}));
  EXPECT_EQ(libs[0].candidates[1].path, "/usr/lib/libcuda.so.1");
  EXPECT_EQ(libs[0].candidates[1].state, "unusable");
  EXPECT_NE(libs[0].candidates[1].reason.find("not an ELF file"), std::string::npos) << libs[0].candidates[1].reason;
  EXPECT_EQ(libs[0].candidates[2],
            (snapshot::LibraryCandidate{"/usr/local/nvidia/lib64/libcuda.so.1", "off_loader_path", "", ""}));
  ASSERT_EQ(libs[1].candidates.size(), 2u);
  EXPECT_EQ(libs[1].candidates[0], (snapshot::LibraryCandidate{multiarch + "/libnvidia-ml.so.1", "wrong_class", "",
                                                               "wrong ELF class: ELFCLASS32"}));
  EXPECT_EQ(libs[1].candidates[1],
            (snapshot::LibraryCandidate{"/opt/nvidia/lib/libnvidia-ml.so.1", "off_loader_path", "", ""}))
      << "an ld.so.conf directory the cache does not list";
}

TEST(LibraryProbe, AFoundLibraryHasNoCandidates) {
  sys::FakeSys s;
  std::string elf64(64, '\0');
  elf64.replace(0, 7,
                "\x7f"
                "ELF\x02\x01\x01");
  elf64[16] = 3;   // ET_DYN
  elf64[18] = 62;  // EM_X86_64
  s.file("/usr/lib/x86_64-linux-gnu/libcuda.so.1", elf64);
  s.file("/usr/local/nvidia/lib64/libcuda.so.1", elf64);
  Context ctx(s, {});
  const auto libs = probe_driver_libraries(ctx, {});
  EXPECT_EQ(libs[0].path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  EXPECT_TRUE(libs[0].candidates.empty());
  EXPECT_TRUE(libs[1].candidates.empty()) << "no libnvidia-ml.so.1 anywhere";
}

TEST(LibraryProbe, LdSoConfIncludesRelativeAndRecursive) {
  sys::FakeSys s;
  s.file("/etc/ld.so.conf", "include ld.so.conf.d/*.conf\n");  // relative: from /etc
  s.file("/etc/ld.so.conf.d/loop.conf", "include /etc/ld.so.conf\nhwcap 0 nosegneg\n/opt/nv/lib=libc6\n");
  s.file("/opt/nv/lib/libnvidia-ml.so.1",
         "\x7f"
         "ELF");
  Context ctx(s, {});
  const auto libs = probe_driver_libraries(ctx, {});
  ASSERT_EQ(libs[1].candidates.size(), 1u) << "the directory once, though the files include each other";
  EXPECT_EQ(libs[1].candidates[0].path, "/opt/nv/lib/libnvidia-ml.so.1");
  EXPECT_EQ(libs[1].candidates[0].state, "off_loader_path");
}

TEST(LibraryProbe, AnUnreadableLdSoConfIsRecorded) {
  sys::FakeSys s;
  s.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  s.dir("/etc/ld.so.conf.d").fail("/etc/ld.so.conf.d", "Permission denied");
  Context ctx(s, {});
  const auto libs = probe_driver_libraries(ctx, {});
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_TRUE(libs[0].path.empty());
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/etc/ld.so.conf.d", "Permission denied"}));
}

}  // namespace cudoctor::probe
