#include "cudoctor/ld/resolver.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "fake_sys.hpp"

namespace cudoctor::ld {
namespace {

std::string host_bytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(Resolver, ALibraryThatShrankWhileReadIsAnErrorNotAParse) {
  const auto bytes = host_bytes("/bin/true");
  ASSERT_GT(bytes.size(), 1000u);
  sys::FakeSys fake;
  fake.file("/bin/true", bytes).file("/bin/cut", bytes).shrinking("/bin/cut");
  Resolver resolver(fake, Config{});
  EXPECT_TRUE(resolver.load("/bin/true")) << "the same bytes, not shrinking, load";
  const auto cut = resolver.load("/bin/cut");
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error(), "/bin/cut: changed while it was read (the file shrank)");
}

}  // namespace
}  // namespace cudoctor::ld
