// The L1 module rule tells a blacklist it could not read from one that is not there.
#include <gtest/gtest.h>

#include <algorithm>

#include "cudoctor/rules/rules.hpp"
#include "snapshots.hpp"

namespace cudoctor::rules {
namespace {

TEST(ModuleRule, AnUnreadableModprobeDirectoryIsNotNoBlacklist) {
  auto snap = testing::h200_snapshot();
  snap.host.container = {};
  for (auto& m : snap.driver.modules) m.loaded = false;
  snap.driver.kernel_module = {};
  snap.driver.blacklists.clear();
  snap.driver.blacklist_sources_unreadable = {"/etc/modprobe.d"};
  const auto fs = run_all(snap, kb::builtin());
  const auto* f = testing::find_finding(fs, "nvidia-module-not-loaded");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(std::find(f->evidence.begin(), f->evidence.end(), "/etc/modprobe.d: could not read its blacklists"),
            f->evidence.end());
}

}  // namespace
}  // namespace cudoctor::rules
