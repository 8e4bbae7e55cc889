#include "cudoctor/probe/version_file.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace cudoctor::probe {
namespace {

using Map = std::map<std::string, std::string>;

// The two patterns the scanner replaced, as the reference it must agree with line for line.
Map by_regex(const std::string& text) {
  static const std::regex item(
      R"re(\[\s*'([A-Za-z_][A-Za-z0-9_]*)'\s*\]\s*=\s*(?:'([^']*)'|"([^"]*)"|(None|True|False|[0-9.]+)))re");
  static const std::regex re(
      R"re(^\s*'?([A-Za-z_][A-Za-z0-9_]*)'?\s*(?::[^=]*)?[=:]\s*(?:'([^']*)'|"([^"]*)"|(None|True|False|[0-9.]+)))re");
  Map out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, item) || std::regex_search(l, m, re))
      out[m[1]] = m[2].matched ? m[2].str() : m[3].matched ? m[3].str() : m[4].str();
  }
  return out;
}

TEST(VersionFile, ReadsTorchVersionPy) {
  // Debian's python3-torch ships this file; a wheel's adds type annotations.
  const std::string debian =
      "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\nhip = None\n";
  EXPECT_EQ(version_file_assignments(debian), (Map{{"__version__", "1.13.0a0"},
                                                   {"debug", "False"},
                                                   {"cuda", "None"},
                                                   {"git_version", "Unknown"},
                                                   {"hip", "None"}}));
  const std::string wheel =
      "from typing import Optional\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
      "__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\n"
      "git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n";
  const auto a = version_file_assignments(wheel);
  EXPECT_EQ(a.at("__version__"), "2.5.1+cu124");
  EXPECT_EQ(a.at("cuda"), "12.4");
  EXPECT_EQ(a.at("hip"), "None");
  EXPECT_EQ(a.count("__all__"), 0u);
  EXPECT_EQ(a, by_regex(wheel));
}

TEST(VersionFile, ReadsTensorFlowBuildInfo) {
  const std::string text =
      "import platform as _platform\nbuild_info = {}\nbuild_info['cuda_version'] = '12.3'\n"
      "build_info['cudnn_version'] = \"8\"\nbuild_info['is_cuda_build'] = True\n"
      "build_info = {'cpu_compiler': '/usr/lib/llvm-17/bin/clang', 'cuda_version': '12.3', 'is_rocm_build': False}\n";
  const auto a = version_file_assignments(text);
  EXPECT_EQ(a.at("cuda_version"), "12.3");
  EXPECT_EQ(a.at("cudnn_version"), "8");
  EXPECT_EQ(a.at("is_cuda_build"), "True");
  EXPECT_EQ(a, by_regex(text));
}

TEST(VersionFile, AgreesWithThePatternsOnAwkwardLines) {
  for (const std::string line : {"x: Dict[str, int] = 3",
                                 "x: a:b = '1'",
                                 "x: 'a' : 5",
                                 "x : = 7",
                                 "x:=8",
                                 "'key': 'v'",
                                 "  y = 1.2.3abc",
                                 "z = Nonesuch",
                                 "w = 'unterminated",
                                 "w = \"dq\"",
                                 "v = -1",
                                 "[ 'k' ] = 'sp'",
                                 "a['bad key'] = 1",
                                 "a['k'] = 'first' ; b['j'] = 'second'",
                                 "a['k'] = x ; b['j'] = 'second'",
                                 "1x = 2",
                                 "_ = 'u'",
                                 "x :",
                                 "x",
                                 "",
                                 "= 3",
                                 "x = ",
                                 "x: = 'q' = 'r'",
                                 "x: y: z = 1",
                                 "name\t=\t'tab'",
                                 "x:='' ",
                                 "'x = 1",
                                 "x' = 2",
                                 "t = True or False",
                                 "n = .5",
                                 "m: int=   42"}) {
    SCOPED_TRACE(line);
    EXPECT_EQ(version_file_assignments(line), by_regex(line));
  }
}

TEST(VersionFile, KeepsTheLastAssignment) {
  EXPECT_EQ(version_file_assignments("cuda = '11.8'\ncuda = '12.1'\n").at("cuda"), "12.1");
}

}  // namespace
}  // namespace cudoctor::probe
