// CUDA_VISIBLE_DEVICES as the CUDA driver reads it, the examples of NVIDIA's programming guide
// included ("0,2,-1,1" shows devices 0 and 2).
#include "cudoctor/rules/visible_devices.hpp"

#include <gtest/gtest.h>

namespace cudoctor::rules {
namespace {

const std::vector<std::string> k_uuids = {"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
                                          "GPU-1b2c3d4e-0000-1111-2222-333344445555"};

TEST(VisibleDevices, TheFirstEntryThatNamesNoDeviceEndsTheList) {
  const auto guide = read_visible_devices("0,2,-1,1", 4, {});
  ASSERT_TRUE(guide.shown);
  EXPECT_EQ(*guide.shown, 2u);
  EXPECT_EQ(guide.listed, 4u);
  EXPECT_EQ(guide.stopped_at, "-1");
  EXPECT_EQ(guide.why, "not an index, a GPU UUID or a MIG id");
  const auto past = read_visible_devices("1,3", 2, {});
  EXPECT_EQ(*past.shown, 1u);
  EXPECT_EQ(past.why, "no GPU 3 (2 GPUs)");
  EXPECT_EQ(*read_visible_devices("2,1", 4, {}).shown, 2u) << "reordering is allowed";
}

TEST(VisibleDevices, ValuesThatHideEveryGpu) {
  for (const char* v : {"", "-1", "none", "NoDevFiles", ",0"}) {
    const auto r = read_visible_devices(v, std::nullopt, {});
    ASSERT_TRUE(r.shown) << "'" << v << "' needs no GPU count to judge";
    EXPECT_EQ(*r.shown, 0u) << v;
  }
  EXPECT_EQ(*read_visible_devices("4", 4, {}).shown, 0u);
}

TEST(VisibleDevices, UuidsByAnyUniqueLeadingPart) {
  EXPECT_EQ(*read_visible_devices("GPU-8932f937,GPU-1b2c", 2, k_uuids).shown, 2u);
  const auto other = read_visible_devices("GPU-8932f937,GPU-ffff", 2, k_uuids);
  EXPECT_EQ(*other.shown, 1u);
  EXPECT_EQ(other.why, "no GPU has this UUID");
}

TEST(VisibleDevices, WhatCannotBeJudgedHereIsLeftUnjudged) {
  EXPECT_FALSE(read_visible_devices("0,1", std::nullopt, {}).shown) << "no GPU count";
  EXPECT_FALSE(read_visible_devices("GPU-8932f937", 2, {}).shown) << "no UUIDs";
  EXPECT_FALSE(read_visible_devices("MIG-GPU-8932f937/1/0", 2, k_uuids).shown) << "MIG instances are not read";
}

}  // namespace
}  // namespace cudoctor::rules
