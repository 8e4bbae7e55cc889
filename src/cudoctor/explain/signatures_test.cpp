#include "cudoctor/explain/signatures.hpp"

#include <gtest/gtest.h>

#include "cudoctor/explain/explain.hpp"

namespace cudoctor::explain {
namespace {

std::string library_with(const std::string& signature) {
  return R"({"signatures": [)" + signature + "]}";
}

const char* k_good = R"json({"id": "x-too-old", "pattern": "too old \\(found version (?P<api>\\d+)\\)",
  "emitter": "PyTorch", "source": "https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp",
  "priority": 60, "captures": {"api": "driver_api"},
  "causes": [{"id": "framework-cuda-too-new-for-driver", "because": "b", "confirm": "nvidia-smi", "fix": "f"}]})json";

TEST(Signatures, ABuiltInLibraryLoadsAndCompiles) {
  const auto& lib = builtin_library();
  EXPECT_GE(lib.signatures.size(), 80u);
  EXPECT_FALSE(lib.xids.empty());
  EXPECT_TRUE(Matcher::compile(lib)) << "every pattern holds a literal the gate can search for";
}

TEST(Signatures, ARecordParsesWithItsCaptures) {
  const auto lib = parse_library(library_with(k_good));
  ASSERT_TRUE(lib) << lib.error();
  ASSERT_EQ(lib->signatures.size(), 1u);
  EXPECT_EQ(lib->signatures[0].captures[0].kind, CaptureKind::driver_api);
}

TEST(Signatures, BadRecordsAreNamedNotLoaded) {
  const struct {
    std::string from, to, message;
  } cases[] = {
      {"\"framework-cuda-too-new-for-driver\"", "\"no-such-id\"", "cause no-such-id is not a catalog id"},
      {"https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp", "see the forum",
       "must be an https URL"},
      {"{\"api\": \"driver_api\"}", "{\"version\": \"driver_api\"}", "capture version is not a named group"},
      {"\"driver_api\"", "\"integer\"", "capture api has an unknown kind"},
      {"\"priority\": 60", "\"priority\": 160", "\"priority\" must be 0–100"},
  };
  for (const auto& c : cases) {
    std::string rec = k_good;
    const auto at = rec.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    rec.replace(at, c.from.size(), c.to);
    const auto lib = parse_library(library_with(rec));
    ASSERT_FALSE(lib) << c.message;
    EXPECT_NE(lib.error().find(c.message), std::string::npos) << lib.error();
    EXPECT_NE(lib.error().find("x-too-old"), std::string::npos) << "the record is named: " << lib.error();
  }
  EXPECT_FALSE(parse_library("{\"signatures\": [1, 2"));
}

TEST(Signatures, APatternThatIsNotRe2IsNamedByTheMatcher) {
  std::string rec = k_good;
  rec.replace(rec.find("too old \\\\(found"), std::string("too old \\\\(found").size(), "too old (found");
  const auto lib = parse_library(library_with(rec));
  ASSERT_TRUE(lib) << lib.error();
  const auto m = Matcher::compile(*lib);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("log signature x-too-old: the pattern is not RE2: missing )"), std::string::npos)
      << m.error();
}

TEST(Signatures, APatternWithoutALiteralIsRefusedByTheMatcher) {
  std::string rec = k_good;
  rec.replace(rec.find("too old \\\\(found version (?P<api>\\\\d+)\\\\)"),
              std::string("too old \\\\(found version (?P<api>\\\\d+)\\\\)").size(), "(?P<api>\\\\d+)");
  const auto lib = parse_library(library_with(rec));
  ASSERT_TRUE(lib) << lib.error();
  const auto m = Matcher::compile(*lib);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("holds no literal"), std::string::npos) << m.error();
}

}  // namespace
}  // namespace cudoctor::explain
