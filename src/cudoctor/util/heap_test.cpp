// prefer_huge_heap on this machine's kernel: the blocks malloc hands out next lie in
// transparent huge pages when the kernel lends them on request (MADV_HUGEPAGE), and a
// process that did not ask gets none. Each case runs in a child process, whose malloc
// settings it changes for good.
#include "cudoctor/util/heap.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace cudoctor::util {
namespace {

// The kB of AnonHugePages in the mapping that holds addr, from /proc/self/smaps; -1 if none.
long huge_kb_at(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.starts_with("AnonHugePages:")) return std::stol(line.substr(14));
  }
  return -1;
}

// In a child: optionally prefer_huge_heap, then 3 MiB malloced and written; the kB of huge
// pages under it, or -1 when the child failed.
long child_huge_kb(bool prefer) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (prefer) prefer_huge_heap();
    constexpr std::size_t k_size = 3 << 20;
    auto* p = static_cast<char*>(std::malloc(k_size));
    long kb = -1;
    if (p) {
      std::memset(p, 1, k_size);
      kb = huge_kb_at(p + k_size / 2);
    }
    const bool wrote = ::write(fds[1], &kb, sizeof kb) == sizeof kb;
    std::free(p);
    ::_exit(wrote ? 0 : 1);
  }
  ::close(fds[1]);
  long kb = -1;
  if (pid < 0 || ::read(fds[0], &kb, sizeof kb) != sizeof kb) kb = -1;
  ::close(fds[0]);
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
  return kb;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  const auto open = s.find('['), close = s.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : s.substr(open + 1, close - open - 1);
}

}  // namespace

TEST(RealHeap, BlocksAfterPreferHugeHeapLieInHugePagesWhereTheKernelLendsThem) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's allocator, not glibc's";
#endif
  const auto mode = thp_mode();
  if (mode != "madvise") GTEST_SKIP() << "transparent_hugepage/enabled is [" << mode << "], not [madvise]";
  std::ifstream f("/proc/buddyinfo");
  const std::string buddyinfo((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (const auto free = free_huge_blocks(buddyinfo); free < 64) GTEST_SKIP() << "too few free 2 MiB blocks: " << free;
  // Without the call, a 3 MiB block is a fresh mapping of small pages; with it, heap in huge pages.
  EXPECT_EQ(child_huge_kb(false), 0);
  EXPECT_GE(child_huge_kb(true), 2048);
}

// This machine's /proc/buddyinfo, and a two-node server's with an 11-column Movable zone.
TEST(Heap, FreeHugeBlocksCountsOrderNineAndTwiceOrderTenOutsideZoneDma) {
  const std::string one =
      "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
      "Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753 \n"
      "Node 0, zone   Normal   2984   3020   3290   3413   2591   1872   1371    778    577    420   1082 \n";
  EXPECT_EQ(free_huge_blocks(one), (1 + 2 * 753) + (420 + 2 * 1082));
  const std::string two =
      "Node 0, zone      DMA      1      1      0      1      2      1      1      0      1      1      3 \n"
      "Node 0, zone    DMA32      6      5      7      6      5      3      4      4      2      0      0 \n"
      "Node 0, zone   Normal  81532  40211  10420   2011    520     71     12      3      0      0      0 \n"
      "Node 1, zone   Normal   1204    998    700    530    402    330    190    101     60     31     12 \n"
      "Node 1, zone  Movable      0      0      0      0      0      0      0      0      0      2      5 \n";
  EXPECT_EQ(free_huge_blocks(two), (31 + 2 * 12) + (2 + 2 * 5));
  // A fragmented node: nothing of order 9 or 10 free, whatever the small orders hold.
  EXPECT_EQ(free_huge_blocks("Node 0, zone   Normal 900000 500000 1 0 0 0 0 0 0 0 0\n"), 0);
  // Not buddyinfo: nothing counted.
  EXPECT_EQ(free_huge_blocks(""), 0);
  EXPECT_EQ(free_huge_blocks("Node 0, zone   Normal   12 34\n"), 0);
  EXPECT_EQ(free_huge_blocks(std::string(5000, 'x')), 0);
}

}  // namespace cudoctor::util
