#include "cudoctor/runtime/nvml_child.hpp"

#include <gtest/gtest.h>

#include "cudoctor/kb/kb.hpp"

namespace cudoctor::runtime {

// The child names the return code itself (the snapshot carries the name, and the probe has
// no knowledge base); the names must be the ones data/nvml_return_codes.json holds.
TEST(NvmlChild, ReturnCodeNamesAgreeWithTheKnowledgeBase) {
  const auto kb = kb::KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  int named = 0;
  for (const auto& [code, rc] : kb->nvml_return_codes()) {
    const auto name = nvml_return_name(code);
    if (name == "NVML_ERROR_?") continue;  // newer than the child's table: the rules name it from the kb
    EXPECT_EQ(name, rc.name) << code;
    ++named;
  }
  EXPECT_GE(named, 31);
  for (int code = 0; code < 1000; ++code) {
    if (nvml_return_name(code) != "NVML_ERROR_?") {
      EXPECT_NE(kb->nvml_return_code(code), nullptr) << code;
    }
  }
  EXPECT_EQ(nvml_return_name(-1), "NVML_ERROR_?");
}

}  // namespace cudoctor::runtime
