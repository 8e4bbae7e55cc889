// NVIDIA_REQUIRE_CUDA as nvidia-container-cli evaluates it, on the value NVIDIA's CUDA 12.4.1
// images set (its first 21 alternatives, as `docker inspect` of such an image shows them).
#include "cudoctor/rules/container_require.hpp"

#include <gtest/gtest.h>

namespace cudoctor::rules {
namespace {

const char* k_cuda_12_4 =
    "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 "
    "brand=nvidia,driver>=470,driver<471 brand=nvidiartx,driver>=470,driver<471 brand=geforce,driver>=470,driver<471 "
    "brand=geforcertx,driver>=470,driver<471 brand=quadro,driver>=470,driver<471 "
    "brand=quadrortx,driver>=470,driver<471 "
    "brand=titan,driver>=470,driver<471 brand=titanrtx,driver>=470,driver<471 brand=tesla,driver>=525,driver<526 "
    "brand=unknown,driver>=525,driver<526 brand=nvidia,driver>=525,driver<526 brand=nvidiartx,driver>=525,driver<526 "
    "brand=geforce,driver>=525,driver<526 brand=geforcertx,driver>=525,driver<526 brand=quadro,driver>=525,driver<526 "
    "brand=quadrortx,driver>=525,driver<526 brand=titan,driver>=525,driver<526 brand=titanrtx,driver>=525,driver<526";

util::Version v(const char* s) {
  return *util::Version::parse(s);
}

RequireFacts host(const char* driver, const char* cuda, std::string brand = "") {
  return {v(cuda), v(driver), std::nullopt, std::move(brand)};
}

TEST(ContainerRequire, ADriverBetweenTheListedBranchesMeetsNoAlternative) {
  const auto r = evaluate_require(k_cuda_12_4, host("535.104.05", "12.2"));
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.met, Met::no);
  EXPECT_EQ(r.first, "cuda>=12.4") << "the alternative the toolkit names";
}

TEST(ContainerRequire, AListedBranchHoldsOnlyByBrand) {
  const auto r = evaluate_require(k_cuda_12_4, host("470.239.06", "11.4"));
  EXPECT_EQ(r.met, Met::unknown);
  EXPECT_EQ(r.undecided, "brand=tesla,driver>=470,driver<471");
  EXPECT_EQ(evaluate_require(k_cuda_12_4, host("470.239.06", "11.4", "GeForce")).met, Met::yes)
      << "brands compare in any case; GeForce is listed, though forward compatibility does not run on it";
  EXPECT_EQ(evaluate_require("brand=tesla,driver>=470,driver<471", host("470.239.06", "11.4", "geforce")).met, Met::no);
}

TEST(ContainerRequire, ANewEnoughDriverMeetsTheFirstAlternative) {
  EXPECT_EQ(evaluate_require(k_cuda_12_4, host("580.95.05", "13.0")).met, Met::yes);
  EXPECT_EQ(evaluate_require("cuda>=12.4", host("550.54.14", "12.4")).met, Met::yes);
  EXPECT_EQ(evaluate_require("cuda>=12.4.0", host("550.54.14", "12.4")).met, Met::yes) << "trailing zeros";
  EXPECT_EQ(evaluate_require("cuda>12.4", host("550.54.14", "12.4")).met, Met::no);
  EXPECT_EQ(evaluate_require("cuda>=12.4", {std::nullopt, v("640.1"), std::nullopt, ""}).met, Met::unknown)
      << "a driver the knowledge base cannot place";
}

TEST(ContainerRequire, ArchAndEveryOperator) {
  RequireFacts f{v("12.2"), v("535.104.05"), v("8.9"), ""};
  EXPECT_EQ(evaluate_require("arch>=8.0", f).met, Met::yes);
  EXPECT_EQ(evaluate_require("arch<8.0", f).met, Met::no);
  EXPECT_EQ(evaluate_require("arch=8.9", f).met, Met::yes);
  EXPECT_EQ(evaluate_require("arch!=8.9", f).met, Met::no);
  EXPECT_EQ(evaluate_require("arch<=8.9,driver>535", f).met, Met::yes);
  EXPECT_EQ(evaluate_require("  cuda>=12.0   arch>=9.0 ", f).met, Met::yes) << "empty alternatives are skipped";
  EXPECT_EQ(evaluate_require("", f).met, Met::yes);
}

TEST(ContainerRequire, WhatTheToolkitRejectsIsInvalid) {
  const RequireFacts f = host("535.104.05", "12.2");
  for (const char* bad : {"cuda>>12.4", "cuda=>12.4", "gpu>=1", "cuda>=12.x", "cuda>=", ">=12", "brand<tesla"})
    EXPECT_FALSE(evaluate_require(bad, f).valid) << bad;
  // Read as the toolkit reads: left to right, stopping at what decides.
  EXPECT_FALSE(evaluate_require("cuda>=99 gpu>=1", f).valid) << "the first alternative failed: the next is read";
  EXPECT_TRUE(evaluate_require("cuda>=12 gpu>=1", f).valid) << "the first alternative held: nothing more is read";
  EXPECT_TRUE(evaluate_require("cuda>=99,gpu>=1", f).valid) << "a failed expression ends its alternative";
}

TEST(ContainerRequire, DisableRequireIsGoBoolean) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) EXPECT_EQ(parse_go_bool(t), true) << t;
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) EXPECT_EQ(parse_go_bool(f), false) << f;
  for (const char* x : {"yes", "on", "", " true", "tRUE"}) EXPECT_EQ(parse_go_bool(x), std::nullopt) << x;
}

}  // namespace
}  // namespace cudoctor::rules
