#include "cudoctor/kb/json_read.hpp"

#include <gtest/gtest.h>

#include "cudoctor/kb/embedded.hpp"

namespace cudoctor::kb {
namespace {

using nlohmann::json;

// Every knowledge-base file, log_signatures.json included, reads into the document
// nlohmann's own parser builds, types of numbers and all.
TEST(ReadJson, BuildsNlohmannsDocumentForEveryKnowledgeBaseFile) {
  ASSERT_GE(embedded_files().size(), 10u);
  for (const auto& f : embedded_files()) {
    SCOPED_TRACE(std::string(f.name));
    const auto ours = read_json(f.text);
    ASSERT_TRUE(ours) << ours.error();
    EXPECT_EQ(*ours, json::parse(f.text));
  }
}

TEST(ReadJson, KeepsNumberKindsAndTheLastOfARepeatedKey) {
  const auto j = read_json(R"({"u": 7, "n": -7, "big": 18446744073709551615, "neg": -9223372036854775808,
                              "f": 1.5, "e": 1e3, "k": 1, "k": 2, "s": "\u00e9\ud83d\ude00", "z": [null, true, false]})");
  ASSERT_TRUE(j) << j.error();
  EXPECT_TRUE(j->at("u").is_number_unsigned());
  EXPECT_TRUE(j->at("n").is_number_integer() && !j->at("n").is_number_unsigned());
  EXPECT_EQ(j->at("big").get<std::uint64_t>(), 18446744073709551615ULL);
  EXPECT_EQ(j->at("neg").get<std::int64_t>(), INT64_MIN);
  EXPECT_TRUE(j->at("f").is_number_float());
  EXPECT_TRUE(j->at("e").is_number_float());
  EXPECT_EQ(j->at("k"), 2);
  EXPECT_EQ(j->at("s"), "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(j->at("z"), json::parse("[null, true, false]"));
  // Each number as nlohmann reads it: "0e40" is 0.0 (fuzz_kb_json found RapidJSON's own
  // conversion of it undefined), a double's last digit rounds as strtod rounds it, an integer
  // past 64 bits is a double, and past a double's range it is an error.
  for (const char* n : {"0e40", "-0", "0.1", "2.2250738585072011e-308", "1e-400", "18446744073709551616",
                        "-9223372036854775809", "123456789012345678901234567890"}) {
    SCOPED_TRACE(n);
    const auto r = read_json(n);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(*r, json::parse(n));
    EXPECT_EQ(r->type(), json::parse(n).type());
  }
  const auto far = read_json("[1,\n 1e400]");
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error(), "Number too big to be stored in double. at line 2, column 2");
  const auto inf = read_json("[9e308]");  // past RapidJSON's exponent check, past a double too
  ASSERT_FALSE(inf);
  EXPECT_EQ(inf.error().substr(0, 21), "Number out of range. ");
}

TEST(ReadJson, SaysWhatIsWrongAndWhere) {
  const auto missing = read_json("{\n  \"a\": 1\n  \"b\": 2\n}");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "Missing a comma or '}' after an object member. at line 3, column 3");
  const auto trailing = read_json("[1] x");
  ASSERT_FALSE(trailing);
  EXPECT_NE(trailing.error().find("at line 1, column 5"), std::string::npos) << trailing.error();
  EXPECT_FALSE(read_json(""));
  EXPECT_FALSE(read_json("[1, 2,]"));
  EXPECT_FALSE(read_json("{\"a\": NaN}"));
  EXPECT_FALSE(read_json("\"\\ud800\""));  // a lone surrogate escape
}

TEST(ReadJson, RejectsInvalidUtf8AsNlohmannDoesAndANulByte) {
  for (const std::string& bad :
       {std::string("[\"\xff\"]"), std::string("[\"\xc0\xaf\"]"), std::string("[\"\xed\xa0\x80\"]"),
        std::string("[\"\xf4\x90\x80\x80\"]"), std::string("[\"\xe2\x82\"]")}) {
    const auto r = read_json(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "invalid UTF-8 at byte 2");
    EXPECT_FALSE(json::accept(bad));
  }
  // nlohmann stops at the NUL and takes "[1]"; a file with a NUL in it is not JSON.
  const auto r = read_json(std::string("[1]\0[2]", 7));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "a NUL byte at byte 3");
}

TEST(ReadJson, ReadsDeepNestingWithoutRecursion) {
  const std::size_t depth = 200000;
  const auto r = read_json(std::string(depth, '[') + std::string(depth, ']'));
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->is_array());
}

}  // namespace
}  // namespace cudoctor::kb
