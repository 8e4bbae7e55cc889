#include "cudoctor/rules/tune_values.hpp"

#include <gtest/gtest.h>

#include "cudoctor/kb/kb.hpp"

namespace cudoctor::rules::tune {
namespace {

const kb::Settings& settings() {
  static const auto k = kb::KnowledgeBase::load_embedded();
  return k->settings();
}

TEST(TuneValues, StrtolReading) {
  EXPECT_EQ(read_int("1").value, 1);
  EXPECT_TRUE(read_int("1").whole);
  EXPECT_EQ(read_int("0x10").value, 16);
  EXPECT_FALSE(read_int("true").whole);
  EXPECT_EQ(read_int("true").value, 0) << "a word reads as 0";
  EXPECT_EQ(read_int("2abc").value, 2);
  EXPECT_FALSE(read_int("2abc").whole);
  EXPECT_FALSE(read_int("").whole);
  EXPECT_EQ(read_int("010").value, 8) << "base 0, as NCCL's strtoll reads it";
  EXPECT_FALSE(read_int("--9223372036854775808").whole) << "one sign at most";
  EXPECT_FALSE(read_int("99999999999999999999").whole);
}

TEST(TuneValues, CublasWorkspaceAsPyTorchSumsIt) {
  const auto w = read_workspace(":4096:8");
  EXPECT_EQ(w.bytes, 32ull << 20);
  EXPECT_TRUE(w.deterministic_ok);
  const auto d = read_workspace(":4096:2:16:8");  // PyTorch's default
  EXPECT_EQ(d.bytes, 4096ull * 1024 * 2 + 16ull * 1024 * 8);
  EXPECT_FALSE(d.deterministic_ok) << "deterministic mode takes only the two exact strings";
  EXPECT_FALSE(read_workspace("4096:8x").parsed());
  EXPECT_EQ(bytes_text(d.bytes), "8.1 MiB");
}

TEST(TuneValues, AllocatorOptionsAsPyTorchChecksThem) {
  auto items = read_alloc_conf("max_split_size_mb:128, garbage_collection_threshold:0.8", settings(), nullptr);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].problem, "");
  EXPECT_EQ(items[1].key, "garbage_collection_threshold") << "spaces are dropped";
  EXPECT_EQ(items[1].problem, "");

  items = read_alloc_conf(
      "max_split_size_mb:10,garbage_collection_threshold:1.0,expandable_segments:true,"
      "roundup_power2_divisions:[256:1,512:3,>:8],backend:cudaMallocAsync",
      settings(), nullptr);
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(items[0].problem, "max_split_size_mb is too small: it must be at least 20");
  EXPECT_EQ(items[1].problem, "garbage_collection_threshold must be a number strictly between 0 and 1");
  EXPECT_EQ(items[2].problem, "expandable_segments takes exactly True or False (capitalised)");
  EXPECT_EQ(items[3].problem, "roundup_power2_divisions divisions must be powers of 2");
  EXPECT_EQ(items[4].problem, "");

  items = read_alloc_conf("max_split_size:128", settings(), nullptr);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_NE(items[0].problem.find("did you mean max_split_size_mb?"), std::string::npos) << items[0].problem;

  // Against the torch that reads it: a key the knowledge base knows that this torch lacks.
  snapshot::LibraryWords torch{
      "torch", "/t", {"/t/lib/libc10_cuda.so"}, {"max_split_size_mb"}, {"graph_capture_record_stream_reuse"}};
  items = read_alloc_conf("max_split_size_mb:64,graph_capture_record_stream_reuse:True", settings(), &torch);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].problem, "");
  EXPECT_NE(items[1].problem.find("not an option this torch knows"), std::string::npos) << items[1].problem;
  items = read_alloc_conf("garbage_collection_threshold:0.6,backend:cudaMallocAsync", settings(), nullptr);
  EXPECT_EQ(items[0].note, "garbage_collection_threshold is ignored with backend:cudaMallocAsync");
}

}  // namespace
}  // namespace cudoctor::rules::tune
