#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {

TEST(ModuleProbe, AnUnreadableModprobeDirectoryIsRecordedNotTakenForNoBlacklist) {
  sys::FakeSys s;
  s.dir("/etc/modprobe.d").fail("/etc/modprobe.d", "Permission denied");
  s.file("/run/modprobe.d/x.conf", "blacklist nvidia\n").fail("/run/modprobe.d/x.conf", "Permission denied");
  s.file("/proc/cmdline", "ro quiet\n");
  snapshot::DriverFacts d;
  Context ctx(s, {});
  probe_modules(ctx, d);
  EXPECT_TRUE(d.blacklists.empty());
  EXPECT_EQ(d.blacklist_sources_unreadable, (std::vector<std::string>{"/etc/modprobe.d", "/run/modprobe.d/x.conf"}));
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/etc/modprobe.d", "Permission denied"}));
  EXPECT_EQ(u[1].path, "/run/modprobe.d/x.conf");
}

TEST(ModuleProbe, AbsentModprobeDirectoriesAreNothingUnreadable) {
  sys::FakeSys s;
  snapshot::DriverFacts d;
  Context ctx(s, {});
  probe_modules(ctx, d);
  EXPECT_TRUE(d.blacklist_sources_unreadable.empty());
  EXPECT_TRUE(ctx.take_unreadable().empty());
}

TEST(ModuleProbe, AnUnreadableModuleDirectoryIsRecorded) {
  sys::FakeSys s;
  s.file("/lib/modules/6.8.0/updates/dkms/nvidia.ko.zst", "");
  s.dir("/lib/modules/6.8.0/kernel").fail("/lib/modules/6.8.0/kernel", "Permission denied");
  Context ctx(s, {});
  EXPECT_EQ(probe_module_files(ctx, "6.8.0"),
            (std::vector<std::string>{"/lib/modules/6.8.0/updates/dkms/nvidia.ko.zst"}));
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].path, "/lib/modules/6.8.0/kernel");
}

}  // namespace cudoctor::probe
