// What the host probe gathers for --redact.
#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {
namespace {

snapshot::HostFacts probe(const sys::FakeSys& s) {
  Context ctx(s, {});
  return probe_host(ctx);
}

TEST(PrivateNames, RootWithAUsersEnvironment) {
  sys::FakeSys s;
  s.set_identity({.uid = 0, .gid = 0, .groups = {}, .user_name = "root"})
      .set_env("HOME", "/home/alice")
      .set_env("USER", "root")
      .set_env("SUDO_USER", "carol")
      .file("/proc/sys/kernel/hostname", "gpu-node-17\n")
      .file("/etc/hosts", "127.0.0.1 localhost\n10.1.2.17 gpu-node-17.cluster.example.org gpu-node-17 # this node\n")
      .file("/etc/passwd",
            "root:x:0:0:root:/root:/bin/bash\n"
            "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            "svc:x:998:998::/var/lib/svc:/usr/sbin/nologin\n"
            "carol:x:1001:1001::/data/c01:/bin/bash\n"
            "dave:x:1002:1002::/srv/u/dave:/bin/bash\n");
  const auto h = probe(s);
  EXPECT_EQ(h.private_names, (std::vector<std::string>{"carol"})) << "root is not a secret";
  EXPECT_EQ(h.private_homes, (std::vector<std::string>{"/home/alice", "/root", "/data/c01", "/srv/u/dave"}))
      << "$HOME, then the passwd homes of users and of the user running it (root's /root too); no system account's";
  EXPECT_EQ(h.host_names, (std::vector<std::string>{"gpu-node-17", "gpu-node-17.cluster.example.org"}));
}

TEST(PrivateNames, AUserWhoseHomeIsOutsideHome) {
  sys::FakeSys s;
  s.set_identity({.uid = 1000, .gid = 1000, .groups = {}, .user_name = "alice"})
      .set_env("HOME", "/srv/u/alice")
      .set_env("LOGNAME", "alice")
      .file("/proc/sys/kernel/hostname", "box.example.com\n");
  const auto h = probe(s);
  EXPECT_EQ(h.private_names, (std::vector<std::string>{"alice"}));
  EXPECT_EQ(h.private_homes, (std::vector<std::string>{"/srv/u/alice"}));
  EXPECT_EQ(h.host_names, (std::vector<std::string>{"box.example.com", "box"}));
}

TEST(PrivateNames, SystemDirectoriesAreNeverHomesToHide) {
  sys::FakeSys s;
  s.set_env("HOME", "/").file("/etc/passwd", "odd:x:1005:1005::/usr:/bin/sh\nlost:x:1006:1006::/nonexistent:/bin/sh\n");
  EXPECT_TRUE(probe(s).private_homes.empty());
}

}  // namespace
}  // namespace cudoctor::probe
