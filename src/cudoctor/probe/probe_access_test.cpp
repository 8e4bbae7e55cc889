// Every file and directory a probe reads goes through Context (read_optional, list_optional,
// map_optional, open_optional), which records what exists but cannot be read, or through its
// read_quiet and list_quiet where unreadability says nothing. This test greps the probe
// sources for the Sys calls that would bypass it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace cudoctor::probe {

TEST(ProbeAccess, OnlyContextReadsFilesAndDirectories) {
  const auto dir = std::filesystem::path(CUDOCTOR_FIXTURES_DIR) / ".." / ".." / "src" / "cudoctor" / "probe";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no probe sources at " << dir;
  static const std::regex direct(R"(\b(sys(\(\))?|m_sys)\s*(\.|->)\s*(read_file|list_dir|map_file)\s*\()");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (e.path().extension() != ".cpp" || name.ends_with("_test.cpp") || name == "context.cpp") continue;
    ++files;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    int line_no = 0;
    std::string line;
    while (std::getline(text, line)) {
      ++line_no;
      EXPECT_FALSE(std::regex_search(line, direct))
          << name << ":" << line_no << " reads through Sys instead of Context: " << line;
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace cudoctor::probe
