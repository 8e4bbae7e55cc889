#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {

std::vector<snapshot::Tool> tools_of(const sys::FakeSys& s) {
  Context ctx(s, {});
  return probe_tools(ctx);
}

TEST(ToolsProbe, FirstExecutableOnPathThenTheSystemDirectories) {
  sys::FakeSys s;
  s.set_env("PATH", "/home/u/bin:relative::/usr/bin/");
  s.file("/home/u/bin/uv", "#!/bin/sh\n", 0755).file("/usr/bin/uv", "#!/bin/sh\n", 0755);
  s.file("/usr/bin/pip", "#!/bin/sh\n", 0644);       // no execute bit
  s.dir("/usr/bin/docker");                          // a directory named like a tool
  s.link("/usr/bin/nvidia-smi", "nvidia-smi.real");  // dangling
  s.file("/bin/nvidia-smi",
         "\x7f"
         "ELF",
         0755);
  s.file("/bin/kmod",
         "\x7f"
         "ELF",
         0755)
      .link("/usr/sbin/modprobe", "../../bin/kmod");
  s.file("/relative/sudo", "", 0755);  // a relative PATH entry is the current directory, which a tree has not
  const auto t = tools_of(s);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], (snapshot::Tool{"nvidia-smi", "/bin/nvidia-smi"}));
  EXPECT_EQ(t[1], (snapshot::Tool{"uv", "/home/u/bin/uv"})) << "PATH order";
  EXPECT_EQ(t[2], (snapshot::Tool{"modprobe", "/usr/sbin/modprobe"})) << "the link's path, after checking its target";
}

TEST(ToolsProbe, PathIsReadUpToItsBound) {
  sys::FakeSys s;
  std::string path;
  for (int i = 0; i < 70; ++i) path += fmt::format("{}/p{}", i ? ":" : "", i);
  s.set_env("PATH", path);
  s.file("/p63/rpm", "", 0755).file("/p64/dpkg", "", 0755);
  const auto t = tools_of(s);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], (snapshot::Tool{"rpm", "/p63/rpm"})) << "the 64th entry is read, the 65th is not";
}

}  // namespace cudoctor::probe
