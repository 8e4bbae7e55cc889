#include "cudoctor/explain/log_reader.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace cudoctor::explain {
namespace {

std::vector<Line> read_all(const std::string& text, std::size_t chunk = 7) {
  std::vector<Line> out;
  LogReader r([&](const Line& l) { out.push_back(l); });
  for (std::size_t i = 0; i < text.size(); i += chunk) r.feed(std::string_view(text).substr(i, chunk));
  r.finish();
  return out;
}

TEST(LogReader, TakesTheNoiseOffEachLine) {
  EXPECT_EQ(clean_line("\x1b[31mRuntimeError\x1b[0m: CUDA error"), "RuntimeError: CUDA error");
  EXPECT_EQ(clean_line("[  812.503117] NVRM: Xid (PCI:0000:01:00): 79, pid=1"),
            "NVRM: Xid (PCI:0000:01:00): 79, pid=1");
  EXPECT_EQ(clean_line("[Tue Mar  5 10:11:12 2024] NVRM: GPU at PCI:0000:01:00: GPU-1"),
            "NVRM: GPU at PCI:0000:01:00: GPU-1");
  EXPECT_EQ(clean_line("Mar 05 10:11:12 gpu-node kernel: NVRM: API mismatch"), "NVRM: API mismatch");
  EXPECT_EQ(clean_line("Mar  5 10:11:12 host dockerd[812]: level=error msg=x"), "level=error msg=x");
  EXPECT_EQ(clean_line("2024-03-05T10:11:12.123456Z [rank0]: RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(clean_line("[rank3]: torch.OutOfMemoryError: CUDA out of memory."),
            "torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(clean_line("W0000 00:00:1711000000.123456  4242 cudart_stub.cc:31] Could not find cuda drivers"),
            "cudart_stub.cc:31] Could not find cuda drivers");
  EXPECT_EQ(clean_line(" 50%|#####     | 5/10\r100%|##########| 10/10 \r"), "100%|##########| 10/10");
  EXPECT_EQ(clean_line("trainer-1  | RuntimeError: No CUDA GPUs are available"),
            "RuntimeError: No CUDA GPUs are available");
  // An nvidia-smi table row keeps its bars; a Python source line keeps its indent.
  EXPECT_EQ(clean_line("|   0  NVIDIA A100-SXM4-40GB          On  |"), "|   0  NVIDIA A100-SXM4-40GB          On  |");
  EXPECT_EQ(clean_line("    raise AssertionError(\"Torch not compiled with CUDA enabled\")"),
            "    raise AssertionError(\"Torch not compiled with CUDA enabled\")");
}

TEST(LogReader, JoinsAKernelMessageWrappedOverNvrmLines) {
  const auto lines = read_all(
      "[ 5.1] NVRM: API mismatch: the client has the version 535.54.03, but\n"
      "[ 5.1] NVRM: this kernel module has the version 530.41.03.  Please\n"
      "[ 5.1] NVRM: make sure that this kernel module and all NVIDIA driver\n"
      "[ 5.1] NVRM: components have the same version.\n"
      "[ 5.2] NVRM: Xid (PCI:0000:01:00): 79, pid=1, GPU has fallen off the bus.\n"
      "[ 5.2] NVRM: GPU at PCI:0000:01:00: GPU-6f2c\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].number, 1u);
  EXPECT_EQ(lines[0].text,
            "NVRM: API mismatch: the client has the version 535.54.03, but this kernel module has the version "
            "530.41.03.  Please make sure that this kernel module and all NVIDIA driver components have the same "
            "version.");
  EXPECT_EQ(lines[1].number, 5u);
  EXPECT_EQ(lines[2].number, 6u) << "an upper-case NVRM: line starts a message of its own";
}

TEST(LogReader, CountsLinesAndCutsOnesBeyondTheLimit) {
  std::string text = "first\r\n" + std::string(LogReader::k_max_line + 100, 'x') + "\nlast";
  std::size_t longest = 0;
  std::vector<Line> lines;
  LogReader r([&](const Line& l) {
    longest = std::max(longest, l.text.size());
    lines.push_back(l);
  });
  r.feed(text);
  r.finish();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].text, "first");
  EXPECT_EQ(longest, LogReader::k_max_line);
  EXPECT_EQ(lines[2].text, "last") << "the last line counts without its newline";
  EXPECT_EQ(r.stats().lines, 3u);
  EXPECT_EQ(r.stats().cut_lines, 1u);
  EXPECT_FALSE(r.looks_binary());
}

TEST(LogReader, TellsBinaryFromText) {
  LogReader bin([](const Line&) {});
  std::string elf =
      "\x7f"
      "ELF\x02\x01\x01";
  elf += std::string(4000, '\0');
  bin.feed(elf);
  EXPECT_TRUE(bin.looks_binary());
  LogReader text([](const Line&) {});
  text.feed("RuntimeError: CUDA error: no kernel image is available for execution on the device\n\x1b[0m\tdone\n");
  EXPECT_FALSE(text.looks_binary()) << "escapes and tabs are text";
}

}  // namespace
}  // namespace cudoctor::explain
