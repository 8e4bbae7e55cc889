#include "cudoctor/util/version.hpp"

#include <gtest/gtest.h>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::util {

TEST(Version, ParsesDriverVersionsWithLeadingZeros) {
  const auto v = Version::parse("535.104.05");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->parts, (std::vector<int>{535, 104, 5}));
  EXPECT_EQ(v->major(), 535);
}

TEST(Version, RejectsWhatIsNotAVersion) {
  for (const char* bad : {"", "abc", "535..1", "1.2.x", ".1", "1.", "99999999999"})
    EXPECT_FALSE(Version::parse(bad)) << bad;
}

TEST(Version, OrdersNumericallyAndTrailingZerosAreEqual) {
  EXPECT_LT(*Version::parse("535.104.05"), *Version::parse("535.129.03"));
  EXPECT_LT(*Version::parse("9.2"), *Version::parse("10.0"));
  EXPECT_EQ(*Version::parse("12.2"), *Version::parse("12.2.0"));
}

TEST(Version, CudaEncoding) {
  EXPECT_EQ(cuda_version_string(12020), "12.2");
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
}

TEST(Strings, ParseUintBasesAndGarbage) {
  EXPECT_EQ(parse_uint("0x10de\n", 0), 0x10deu);
  EXPECT_EQ(parse_uint(" 16 "), 16u);
  EXPECT_FALSE(parse_uint("0x", 0));
  EXPECT_FALSE(parse_uint("12ab"));
  EXPECT_FALSE(parse_uint(""));
}

TEST(Strings, PrintableEscapesControlBytes) {
  EXPECT_EQ(printable(std::string("a\x01\xff", 3)), "a\\x01\\xff");
}

TEST(Strings, SplitKeepsEmptyFieldsSplitWsDoesNot) {
  EXPECT_EQ(split("a::b", ':').size(), 3u);
  EXPECT_EQ(split_ws(" a \t b  ").size(), 2u);
}

}  // namespace cudoctor::util
