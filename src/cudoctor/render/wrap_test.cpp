#include <gtest/gtest.h>

#include "cudoctor/render/render.hpp"

namespace cudoctor::render {

TEST(Wrap, BreaksAtWidthAndIndentsContinuations) {
  EXPECT_EQ(wrap("aaa bbb ccc", 7, "  "), "aaa bbb\n  ccc");
  EXPECT_EQ(wrap("≥≥≥ b", 5, ""), "≥≥≥ b") << "counts code points, not bytes";
  EXPECT_EQ(wrap("", 10, ""), "");
}

}  // namespace cudoctor::render
