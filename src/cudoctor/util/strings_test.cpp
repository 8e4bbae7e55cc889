#include "cudoctor/util/strings.hpp"

#include <gtest/gtest.h>

namespace cudoctor::util {

TEST(Visible, KeepsValidUtf8AndPlainText) {
  EXPECT_EQ(visible("driver ≥ 535 ✓ → ok"), "driver ≥ 535 ✓ → ok");
  EXPECT_EQ(visible("NVIDIA GeForce RTX 4090 (ÄÖÜ, 日本, 🚀)"), "NVIDIA GeForce RTX 4090 (ÄÖÜ, 日本, 🚀)");
  EXPECT_EQ(visible(""), "");
  EXPECT_EQ(visible("back\\slash"), "back\\slash") << "a backslash is shown as it is";
}

TEST(Visible, EscapesC0ControlsAndDel) {
  EXPECT_EQ(visible("NVIDIA\nH100"), "NVIDIA\\nH100");
  EXPECT_EQ(visible("a\tb\rc"), "a\\tb\\rc");
  EXPECT_EQ(visible("\x1b]0;PWNED\x07\x1b[2J"), "\\x1b]0;PWNED\\x07\\x1b[2J");
  EXPECT_EQ(visible(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(visible("del\x7f"), "del\\x7f");
}

TEST(Visible, EscapesC1ControlsSeparatorsAndBidiOverrides) {
  EXPECT_EQ(visible("csi\xc2\x9b"
                    "31m"),
            "csi\\u009b31m")
      << "U+009B is an 8-bit CSI";
  EXPECT_EQ(visible("nel\xc2\x85"), "nel\\u0085");
  EXPECT_EQ(visible("line\xe2\x80\xa8sep"), "line\\u2028sep");
  EXPECT_EQ(visible("abc\xe2\x80\xae"
                    "fed"),
            "abc\\u202efed")
      << "right-to-left override";
  EXPECT_EQ(visible("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(visible("\xc2\xa0nbsp"), "\xc2\xa0nbsp") << "U+00A0 is printable";
}

TEST(Visible, EscapesEveryByteOfMalformedUtf8) {
  EXPECT_EQ(visible("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(visible("\xe2\x89"), "\\xe2\\x89") << "truncated ≥";
  EXPECT_EQ(visible("\xc0\xaf"), "\\xc0\\xaf") << "overlong /";
  EXPECT_EQ(visible("\xe0\x80\xaf"), "\\xe0\\x80\\xaf") << "overlong /";
  EXPECT_EQ(visible("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a surrogate";
  EXPECT_EQ(visible("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80") << "past U+10FFFF";
  EXPECT_EQ(visible("\x80"
                    "abc"),
            "\\x80abc")
      << "a lone continuation byte";
  EXPECT_EQ(visible("\xe2\x89\xa5\xe2"), "≥\\xe2");
}

TEST(Visible, CutsAtCodePointsNotBytes) {
  EXPECT_EQ(visible("≥≥≥≥", 2), "≥≥…");
  EXPECT_EQ(visible("abc", 3), "abc");
  EXPECT_EQ(printable(std::string(100, 'a')), std::string(80, 'a') + "…");
}

TEST(Visible, HasControlAgreesWithVisible) {
  for (const std::string s : {"plain", "≥ ✓", "a\nb", "\x1b[31m", "\xff", "\xc2\x9b", "\xe2\x80\xae"})
    EXPECT_EQ(has_control(s), visible(s) != s) << visible(s);
}

}  // namespace cudoctor::util

namespace cudoctor::util {
namespace {

TEST(EditDistance, CountsTheFewestEdits) {
  EXPECT_EQ(edit_distance("chek", "check"), 1u);
  EXPECT_EQ(edit_distance("tolkits", "toolkits"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("max_split_size", "max_split_size_mb"), 3u);
  EXPECT_EQ(edit_distance("plan", "plan"), 0u);
}

}  // namespace
}  // namespace cudoctor::util
