#include "cudoctor/plan/toolkit_selection.hpp"

#include <gtest/gtest.h>

#include <map>

namespace cudoctor::plan {
namespace {

snapshot::Toolkit toolkit(const std::string& root, const std::string& version, const std::string& layout,
                          const std::string& lib_dir) {
  snapshot::Toolkit t;
  t.root = root;
  t.version = version;
  t.layout = layout;
  t.bin_dir = root + "/bin";
  t.lib_dir = lib_dir;
  return t;
}

snapshot::ToolkitFacts two_toolkits() {
  snapshot::ToolkitFacts f;
  // lib64 resolved outside the root, as a symlinked library directory gives it.
  f.toolkits.push_back(toolkit("/usr/local/cuda-12.4", "12.4.131", "nvidia", "/opt/cuda-12.4-libs"));
  f.toolkits.push_back(toolkit("/usr/lib/nvidia-cuda-toolkit", "11.5.119", "debian", "/usr/lib/x86_64-linux-gnu"));
  return f;
}

TEST(ToolkitOf, RootBinAndOwnLibraryDirectory) {
  const auto f = two_toolkits();
  EXPECT_EQ(toolkit_of(f, "/usr/local/cuda-12.4"), &f.toolkits[0]);
  EXPECT_EQ(toolkit_of(f, "/usr/local/cuda-12.4/bin/nvcc"), &f.toolkits[0]);
  EXPECT_EQ(toolkit_of(f, "/opt/cuda-12.4-libs/libcudart.so.12"), &f.toolkits[0]);
  EXPECT_EQ(toolkit_of(f, "/usr/lib/nvidia-cuda-toolkit/bin/nvcc"), &f.toolkits[1]);
  // Debian's library directory is everybody's: a library there is no toolkit's.
  EXPECT_EQ(toolkit_of(f, "/usr/lib/x86_64-linux-gnu/libcudart.so.11.0"), nullptr);
  // A sibling whose name only starts like the root is not inside it.
  EXPECT_EQ(toolkit_of(f, "/usr/local/cuda-12.4.1/bin/nvcc"), nullptr);
  EXPECT_EQ(toolkit_of(f, ""), nullptr);
}

TEST(ToolkitSelectors, EachSelectorAndTheToolkitItPointsAt) {
  auto f = two_toolkits();
  f.path_nvcc = "/usr/local/cuda/bin/nvcc";
  f.path_nvcc_real = "/usr/local/cuda-12.4/bin/nvcc";
  f.cuda_home = "/usr/local/cuda";
  f.cuda_link_target = "cuda-12.4";
  f.cuda_link_resolved = "/usr/local/cuda-12.4";
  f.ld_library_path = {"/home/u/lib", "/usr/local/cuda/lib64"};
  f.cudart_picks = {{"libcudart.so.12", "/usr/local/cuda-12.4/lib64/libcudart.so.12", "LD_LIBRARY_PATH"},
                    {"libcudart.so.11", "", ""}};
  const std::map<std::string, std::string> links = {{"/usr/local/cuda", "/usr/local/cuda-12.4"},
                                                    {"/usr/local/cuda/lib64", "/usr/local/cuda-12.4/lib64"}};
  const auto canonical = [&](const std::string& p) -> std::optional<std::string> {
    const auto it = links.find(p);
    return it == links.end() ? std::optional<std::string>(p) : it->second;
  };
  const std::vector<std::pair<std::string, std::string>> want = {
      {"PATH", "/usr/local/cuda/bin/nvcc -> CUDA 12.4.131 (/usr/local/cuda-12.4)"},
      {"CUDA_HOME", "/usr/local/cuda -> CUDA 12.4.131 (/usr/local/cuda-12.4)"},
      {"/usr/local/cuda", "/usr/local/cuda-12.4"},
      {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64 -> CUDA 12.4.131 (/usr/local/cuda-12.4)"},
      {"loader", "libcudart.so.12 -> /usr/local/cuda-12.4/lib64/libcudart.so.12 (LD_LIBRARY_PATH)"},
      {"loader", "libcudart.so.11 -> not found"}};
  EXPECT_EQ(toolkit_selectors(f, canonical), want);
}

TEST(ToolkitSelectors, NothingSelected) {
  auto f = two_toolkits();
  f.cuda_home = "/opt/nothing";
  f.cuda_link_target = "cuda-13.0";
  f.ld_library_path = {"/usr/lib/x86_64-linux-gnu"};
  const auto unresolved = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  const std::vector<std::pair<std::string, std::string>> want = {{"PATH", "no nvcc"},
                                                                 {"CUDA_HOME", "/opt/nothing (no toolkit there)"},
                                                                 {"/usr/local/cuda", "cuda-13.0 (dangling)"},
                                                                 {"LD_LIBRARY_PATH", "no toolkit directory"}};
  EXPECT_EQ(toolkit_selectors(f, unresolved), want);
  f.cuda_home.reset();
  f.cuda_link_target.clear();
  const auto sel = toolkit_selectors(f, unresolved);
  EXPECT_EQ(sel[1].second, "not set");
  EXPECT_EQ(sel[2].second, "no link");
}

}  // namespace
}  // namespace cudoctor::plan
