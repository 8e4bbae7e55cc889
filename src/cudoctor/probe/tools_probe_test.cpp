#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "fake_sys.hpp"
#include "run_cli.hpp"

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

TEST(ToolsProbe, ADirectoryThatCannotBeListedIsAskedNameByName) {
  sys::FakeSys s;
  s.set_env("PATH", "/opt/x:/usr/bin");
  s.file("/opt/x/uv", "#!/bin/sh\n", 0755).file("/usr/bin/uv", "#!/bin/sh\n", 0755);
  s.fail("/opt/x", "Permission denied");  // searchable, not readable: execvp still runs /opt/x/uv
  const auto t = tools_of(s);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], (snapshot::Tool{"uv", "/opt/x/uv"}));
}

TEST(ToolsProbe, AMergedUsrKeepsThePathsSpellingAndAMissingDirectoryHasNothing) {
  sys::FakeSys s;
  s.set_env("PATH", "/nowhere:/bin:/usr/bin");
  s.link("/bin", "usr/bin").file("/usr/bin/dpkg", "", 0755).file("/usr/sbin/dkms", "", 0755);
  const auto t = tools_of(s);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], (snapshot::Tool{"dpkg", "/bin/dpkg"})) << "PATH's first spelling of the directory";
  EXPECT_EQ(t[1], (snapshot::Tool{"dkms", "/usr/sbin/dkms"})) << "the fallback directories after PATH";
}

// Against bash on this machine: each tool found is where `type -P` finds it on the same
// directories, and the ones every Debian has (dpkg, apt, libc-bin) are found.
TEST(ToolsProbe, FindsWhatBashFindsOnThisMachine) {
  const auto sys = sys::make_root_sys("/");
  Context ctx(*sys, {});
  const auto tools = probe_tools(ctx);
  const std::string path = sys->env("PATH").value_or("") + ":/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin";
  const auto bash_finds = [&](const std::string& name) {
    auto out = testing::shell_output("PATH='" + path + "' /bin/bash -c 'type -P " + name + "'");
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  for (const auto& t : tools) EXPECT_EQ(t.path, bash_finds(t.name)) << t.name;
  for (const char* name : {"dpkg", "apt-get", "ldconfig"}) {
    const auto it = std::find_if(tools.begin(), tools.end(), [&](const auto& t) { return t.name == name; });
    EXPECT_NE(it, tools.end()) << name;
  }
}

}  // namespace cudoctor::probe
