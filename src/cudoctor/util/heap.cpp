// The process's heap in transparent huge pages where the kernel has them free (see heap.hpp).
#include "cudoctor/util/heap.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::util {

namespace {

constexpr std::uintptr_t k_huge = std::uintptr_t{2} << 20;  // x86-64's PMD-sized page
constexpr std::size_t k_grow = std::size_t{8} << 20;        // the heap grows this much at a time
constexpr std::size_t k_step = std::size_t{64} << 10;       // below the mmap threshold

// Where the blocks below go, so that the compiler keeps each malloc (it may drop one whose
// result is never looked at); g_reserved is never freed.
void* volatile g_seen = nullptr;
void* volatile g_reserved = nullptr;
void* seen(void* p) {
  g_seen = p;
  return p;
}

// /proc/buddyinfo, read into buf; "" when it cannot be read.
std::string_view read_buddyinfo(char (&buf)[4096]) {
  const int fd = ::open("/proc/buddyinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const auto n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string_view(buf, static_cast<std::size_t>(n)) : std::string_view();
}

}  // namespace

long free_huge_blocks(std::string_view buddyinfo) {
  long blocks = 0;
  for (const auto line : lines(buddyinfo)) {
    // "Node 0, zone   Normal   2984 … 420 1082": the zone, then the free blocks of orders 0 to 10.
    const auto f = split_ws(line);
    if (f.size() != 15 || f[2] != "zone" || f[3] == "DMA") continue;
    const auto order9 = parse_uint(f[13]), order10 = parse_uint(f[14]);
    if (order9 && order10) blocks += static_cast<long>(std::min<std::uint64_t>(*order9 + 2 * *order10, 1L << 40));
  }
  return blocks;
}

void prefer_huge_heap() {
#if defined(__SANITIZE_ADDRESS__)
  return;  // ASan's allocator is not glibc's: neither its options nor its heap apply
#endif
  // One arena: a thread's own arena grows a page at a time (an mprotect and a fault each).
  mallopt(M_ARENA_MAX, 1);
  // Blocks up to 32 MiB from the heap, not fresh mappings; nothing given back to the kernel
  // while the process (a short-lived command) runs.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, static_cast<int>(k_grow));
  char buf[4096];
  if (free_huge_blocks(read_buddyinfo(buf)) < 64) return;  // would compact memory, or none to be had
  // Grow the heap once now, touching only block headers near the start of what it gets.
  auto* const before = static_cast<char*>(::sbrk(0));
  void* held[64];
  int n = 0;
  while (n < 64 && static_cast<char*>(::sbrk(0)) == before) held[n++] = seen(std::malloc(k_step));
  const auto after = reinterpret_cast<std::uintptr_t>(::sbrk(0));
  const auto lo = (reinterpret_cast<std::uintptr_t>(before) + k_step + 4096 + k_huge - 1) & ~(k_huge - 1);
  const auto hi = after & ~(k_huge - 1);
  // The whole 2 MiB pages inside it marked before anything is written there: the first write
  // into each takes one huge page.
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
  for (int i = 0; i < n; ++i) std::free(held[i]);
  if (hi <= lo) return;
  // What lies below the first huge page is reserved, never written past its header and never
  // freed, so that the heap's next blocks come from the huge pages: address space, not memory.
  void* const probe = seen(std::malloc(k_huge));
  if (!probe) return;
  const auto top = reinterpret_cast<std::uintptr_t>(probe);
  std::free(probe);
  if (top + 4096 < lo) g_reserved = std::malloc(lo - top - 64);
}

}  // namespace cudoctor::util
