#include "cudoctor/compat/binary.hpp"

#include <gtest/gtest.h>

namespace cudoctor::compat {
namespace {

util::Version v(const char* s) {
  return *util::Version::parse(s);
}

std::vector<Target> targets(std::initializer_list<const char*> names) {
  std::vector<Target> out;
  for (const auto* n : names) out.push_back(*parse_target(n));
  return out;
}

TEST(UnitCompat, ParsesEveryTargetSpelling) {
  const auto a = parse_target("sm_90a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, Target::Kind::cubin);
  EXPECT_EQ(a->major, 9);
  EXPECT_EQ(a->minor, 0);
  EXPECT_EQ(a->variant, 'a');
  EXPECT_EQ(parse_target("sm_100f")->name(), "sm_100f");
  EXPECT_EQ(parse_target("sm_120")->cc(), v("12.0"));
  EXPECT_EQ(parse_target("sm_103")->cc(), v("10.3"));
  EXPECT_EQ(parse_target("compute_80")->kind, Target::Kind::ptx);
  EXPECT_EQ(parse_target("compute_89")->name(), "compute_89");
  for (const auto* bad : {"", "sm_", "sm_9", "sm_1000", "sm_90x", "sm_09", "compute_abc", "lto_90", "SM_90", "sm_90aa"})
    EXPECT_FALSE(parse_target(bad)) << bad;
}

TEST(UnitCompat, ComputeCapabilitiesAreMajorDotMinor) {
  ASSERT_TRUE(parse_cc("8.9"));
  EXPECT_EQ(parse_cc("12.0")->parts, (std::vector<int>{12, 0}));
  for (const char* bad : {"", "8", "8.9.1", "sm_89", "abc", "8."}) EXPECT_FALSE(parse_cc(bad)) << bad;
}

TEST(UnitCompat, SameMajorCubinsRunOnNewerMinors) {
  // Ada Compatibility Guide 1.2: an sm_86 cubin runs on 8.9.
  const auto t = targets({"sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"});
  const auto r = runs_on(t, v("8.9"));
  EXPECT_EQ(r.how, How::compatible_cubin);
  EXPECT_EQ(r.describe(), "sm_86 cubin");
  EXPECT_FALSE(runs_on(t, v("9.0")).runs()) << "no cubin crosses a major, and there is no PTX";
  EXPECT_FALSE(runs_on(targets({"sm_37"}), v("3.5")).runs()) << "a 3.7 cubin does not run on 3.5";
}

TEST(UnitCompat, PicksTheClosestCubin) {
  const auto t = targets({"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "compute_90"});
  const auto r = runs_on(t, v("8.9"));
  EXPECT_EQ(r.how, How::exact_cubin);
  EXPECT_EQ(r.describe(), "sm_89 cubin");
  EXPECT_EQ(runs_on(t, v("8.7")).describe(), "sm_86 cubin");
}

TEST(UnitCompat, ArchSpecificOnlyOnItsOwnCc) {
  const auto t = targets({"sm_90a"});
  EXPECT_EQ(runs_on(t, v("9.0")).how, How::exact_cubin);
  EXPECT_FALSE(runs_on(t, v("10.0")).runs());
  EXPECT_FALSE(runs_on(targets({"sm_100a"}), v("10.3")).runs());
  EXPECT_FALSE(runs_on(targets({"compute_90a"}), v("10.0")).runs()) << "arch-specific PTX is not forward compatible";
  EXPECT_EQ(runs_on(targets({"sm_90", "sm_90a"}), v("9.0")).describe(), "sm_90a cubin");
}

TEST(UnitCompat, FamilySpecificWithinItsMajor) {
  const auto t = targets({"sm_100f"});
  EXPECT_EQ(runs_on(t, v("10.3")).how, How::compatible_cubin);
  EXPECT_EQ(runs_on(t, v("10.0")).how, How::exact_cubin);
  EXPECT_FALSE(runs_on(t, v("12.0")).runs());
  EXPECT_FALSE(runs_on(targets({"compute_100f"}), v("12.0")).runs());
  EXPECT_EQ(runs_on(targets({"compute_100f"}), v("10.3")).how, How::ptx_jit);
}

TEST(UnitCompat, PtxJitsForwardOnlyWhenJitIsPossible) {
  const auto t = targets({"sm_80", "compute_80"});
  const auto r = runs_on(t, v("9.0"));
  EXPECT_EQ(r.how, How::ptx_jit);
  EXPECT_EQ(r.describe(), "compute_80 PTX (JIT)");
  const auto denied = runs_on(t, v("9.0"), false);
  EXPECT_FALSE(denied.runs());
  ASSERT_TRUE(denied.ptx_denied);
  EXPECT_EQ(denied.ptx_denied->name(), "compute_80");
  EXPECT_EQ(runs_on(t, v("8.6"), false).describe(), "sm_80 cubin") << "a cubin needs no JIT";
  EXPECT_FALSE(runs_on(targets({"compute_90"}), v("8.9")).runs()) << "PTX does not run on an older GPU";
  EXPECT_EQ(runs_on(targets({"compute_70", "compute_80"}), v("12.0")).describe(), "compute_80 PTX (JIT)");
}

}  // namespace
}  // namespace cudoctor::compat
