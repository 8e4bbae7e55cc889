#include <gtest/gtest.h>

#include "cudoctor/kb/kb.hpp"

namespace cudoctor::kb {
namespace {

std::vector<std::string> names(const std::vector<const ReturnCode*>& hits) {
  std::vector<std::string> out;
  for (const auto* h : hits) out.push_back(h->api + " " + h->name);
  return out;
}

TEST(KbQueries, FindErrorsByNumberMatchesEveryApi) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  // CUDA errors first (runtime, then driver, as the file lists them), then NVML.
  EXPECT_EQ(names(kb->find_errors("3")),
            (std::vector<std::string>{"runtime cudaErrorInitializationError", "driver CUDA_ERROR_NOT_INITIALIZED",
                                      "nvml NVML_ERROR_NOT_SUPPORTED"}));
  EXPECT_EQ(names(kb->find_errors("100")),
            (std::vector<std::string>{"runtime cudaErrorNoDevice", "driver CUDA_ERROR_NO_DEVICE"}));
}

TEST(KbQueries, FindErrorsByNameIgnoresCase) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  EXPECT_EQ(names(kb->find_errors("cudaerrornodevice")), (std::vector<std::string>{"runtime cudaErrorNoDevice"}));
  EXPECT_EQ(names(kb->find_errors("nvml_error_not_supported")),
            (std::vector<std::string>{"nvml NVML_ERROR_NOT_SUPPORTED"}));
  EXPECT_TRUE(kb->find_errors("cudaErrorNoSuchThing").empty());
  EXPECT_TRUE(kb->find_errors("").empty());
}

}  // namespace
}  // namespace cudoctor::kb
