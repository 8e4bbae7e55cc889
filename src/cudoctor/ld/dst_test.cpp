#include "cudoctor/ld/dst.hpp"

#include <gtest/gtest.h>

namespace cudoctor::ld {
namespace {

std::string sub(const std::string& s) {
  return substitute(s, "/opt/app/bin", "lib64", "x86_64");
}

TEST(Dst, PlainAndBracedTokens) {
  EXPECT_EQ(sub("$ORIGIN/../lib"), "/opt/app/bin/../lib");
  EXPECT_EQ(sub("${ORIGIN}/../lib"), "/opt/app/bin/../lib");
  EXPECT_EQ(sub("/usr/$LIB/$PLATFORM"), "/usr/lib64/x86_64");
  EXPECT_EQ(sub("/usr/${LIB}x/${PLATFORM}"), "/usr/lib64x/x86_64");
  EXPECT_EQ(sub("$ORIGIN:$ORIGIN/sub"), "/opt/app/bin:/opt/app/bin/sub");
}

TEST(Dst, WhatIsNotATokenStays) {
  EXPECT_EQ(sub("$ORIGINAL/lib"), "$ORIGINAL/lib") << "a name character continues the word";
  EXPECT_EQ(sub("$LIB_DIR"), "$LIB_DIR");
  EXPECT_EQ(sub("$HOME/lib"), "$HOME/lib");
  EXPECT_EQ(sub("${ORIGIN"), "${ORIGIN");
  EXPECT_EQ(sub("lib$"), "lib$");
  EXPECT_EQ(sub(""), "");
}

}  // namespace
}  // namespace cudoctor::ld
