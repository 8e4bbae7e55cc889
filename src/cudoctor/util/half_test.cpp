#include "cudoctor/util/half.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cudoctor::util {
namespace {

constexpr float k_inf = std::numeric_limits<float>::infinity();

float bits(std::uint32_t u) {
  return std::bit_cast<float>(u);
}

}  // namespace

TEST(Half, Fp16ExactValues) {
  EXPECT_EQ(to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(to_fp16(0.0f), 0x0000);
  EXPECT_EQ(to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(to_fp16(0.5f), 0x3800);
  EXPECT_EQ(to_fp16(65504.0f), 0x7bff);  // the largest finite fp16
  EXPECT_EQ(to_fp16(-65504.0f), 0xfbff);
  EXPECT_EQ(from_fp16(0x3c00), 1.0f);
  EXPECT_EQ(from_fp16(0xc000), -2.0f);
  EXPECT_EQ(from_fp16(0x7bff), 65504.0f);
}

TEST(Half, Fp16Subnormals) {
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -15)), 0x0200);
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(to_fp16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -25)), 0x0000);     // half of the smallest: ties to even (0)
  EXPECT_EQ(to_fp16(std::ldexp(1.5f, -25)), 0x0001);     // above half: rounds up
  EXPECT_EQ(to_fp16(std::ldexp(3.0f, -25)), 0x0002);     // 1.5 units: ties to even (2)
  EXPECT_EQ(to_fp16(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(to_fp16(std::ldexp(2047.0f, -25)), 0x0400);  // 1023.5 units: rounds up into the normals
  EXPECT_EQ(to_fp16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(from_fp16(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(from_fp16(0x0200), std::ldexp(1.0f, -15));
  EXPECT_EQ(from_fp16(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(from_fp16(0x8001), -std::ldexp(1.0f, -24));
}

TEST(Half, Fp16InfinityAndNan) {
  EXPECT_EQ(to_fp16(k_inf), 0x7c00);
  EXPECT_EQ(to_fp16(-k_inf), 0xfc00);
  EXPECT_EQ(to_fp16(65520.0f), 0x7c00);  // halfway past 65504: ties to even, which is infinity
  EXPECT_EQ(to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(to_fp16(bits(0x7f800001u)) & 0x7e00, 0x7e00);  // a signalling NaN stays a (quiet) NaN
  EXPECT_EQ(from_fp16(0x7c00), k_inf);
  EXPECT_EQ(from_fp16(0xfc00), -k_inf);
  EXPECT_TRUE(std::isnan(from_fp16(0x7e00)));
  EXPECT_TRUE(std::isnan(from_fp16(0x7c01)));
}

TEST(Half, Fp16RoundsToNearestEven) {
  // Between 1 and 1 + 2^-10 the fp16 step is 2^-10.
  EXPECT_EQ(to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);                          // tie, even is 1.0
  EXPECT_EQ(to_fp16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);                          // tie, even is the upper
  EXPECT_EQ(to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);  // past the tie
  EXPECT_EQ(to_fp16(1.0f + std::ldexp(1.0f, -12)), 0x3c00);                          // below the tie
  EXPECT_EQ(to_fp16(2.0f - std::ldexp(1.0f, -12)), 0x4000);                          // carries into the exponent
}

TEST(Half, Fp16RoundTripsEveryFiniteValue) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto v = static_cast<std::uint16_t>(h);
    if ((v & 0x7c00) == 0x7c00) continue;
    EXPECT_EQ(to_fp16(from_fp16(v)), v) << std::hex << h;
  }
}

TEST(Half, Bf16ExactValues) {
  EXPECT_EQ(to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(to_bf16(65504.0f), 0x4780);  // 65504 = 0x477fe000: rounds up to 65536
  EXPECT_EQ(to_bf16(0.0f), 0x0000);
  EXPECT_EQ(to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(from_bf16(0x3f80), 1.0f);
  EXPECT_EQ(from_bf16(0xc000), -2.0f);
  EXPECT_EQ(from_bf16(0x4780), 65536.0f);
}

TEST(Half, Bf16SubnormalsInfinityAndNan) {
  EXPECT_EQ(to_bf16(bits(0x00010000u)), 0x0001);  // the smallest bf16 subnormal
  EXPECT_EQ(to_bf16(bits(0x00008000u)), 0x0000);  // half of it: ties to even
  EXPECT_EQ(to_bf16(bits(0x00018000u)), 0x0002);  // 1.5 of it: ties to even
  EXPECT_EQ(from_bf16(0x0001), bits(0x00010000u));
  EXPECT_EQ(to_bf16(k_inf), 0x7f80);
  EXPECT_EQ(to_bf16(-k_inf), 0xff80);
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds past the largest finite
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(to_bf16(bits(0x7f800001u)), 0x7fc0);  // a NaN whose payload is in the dropped bits
  EXPECT_EQ(from_bf16(0x7f80), k_inf);
  EXPECT_TRUE(std::isnan(from_bf16(0x7fc0)));
}

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(to_bf16(bits(0x3f808000u)), 0x3f80);  // tie, even is the lower
  EXPECT_EQ(to_bf16(bits(0x3f818000u)), 0x3f82);  // tie, even is the upper
  EXPECT_EQ(to_bf16(bits(0x3f808001u)), 0x3f81);  // past the tie
  EXPECT_EQ(to_bf16(bits(0x3f807fffu)), 0x3f80);  // below the tie
}

static_assert(to_fp16(1.0f) == 0x3c00 && to_bf16(1.0f) == 0x3f80);

}  // namespace cudoctor::util
