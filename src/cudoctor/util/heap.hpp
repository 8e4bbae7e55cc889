#pragma once
// Where page faults are dear (a virtual machine with shadow page tables takes ~10 µs for
// each fresh 4 KiB page, against ~5 µs for a whole 2 MiB transparent huge page), a command
// that touches a few megabytes of heap spends more time faulting than working. Called first
// in main: one malloc arena, and the heap grown in one step whose 2 MiB pages are marked
// MADV_HUGEPAGE, when the kernel has free 2 MiB blocks (so no compaction stalls a loaded node).
#include <string_view>

namespace cudoctor::util {

void prefer_huge_heap();

// Free 2 MiB blocks (order 9, and twice order 10) in the zones a process's pages come from
// (all but ZONE_DMA), from the text of /proc/buddyinfo. With plenty free (64), a huge page is
// had at once, without the compaction a fault in a MADV_HUGEPAGE range may otherwise wait for.
long free_huge_blocks(std::string_view buddyinfo);

}  // namespace cudoctor::util
