#include "cudoctor/plan/framework_arg.hpp"

#include <gtest/gtest.h>

namespace cudoctor::plan {
namespace {

const kb::KnowledgeBase& kb() {
  static const auto k = kb::KnowledgeBase::load_embedded();
  return *k;
}

TEST(FrameworkArg, NameAloneSelectsEveryRelease) {
  const auto a = parse_framework("jax", kb());
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->name, "jax");
  EXPECT_EQ(a->version, "");
}

TEST(FrameworkArg, PipStyleVersionAndThePyTorchAlias) {
  const auto a = parse_framework("pytorch==2.5", kb());
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->name, "torch");
  EXPECT_EQ(a->version, "2.5");
  const auto b = parse_framework("torch==", kb());
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(b->version, "");
}

TEST(FrameworkArg, UnknownNamesListTheKnownOnes) {
  const auto a = parse_framework("mxnet==1.9", kb());
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error(), "--framework mxnet: not one of torch, tensorflow, jax, cupy, onnxruntime");
  EXPECT_FALSE(parse_framework("", kb()));
  EXPECT_FALSE(parse_framework("Torch", kb()));
}

}  // namespace
}  // namespace cudoctor::plan
