#pragma once
// A file mapped with mmap raises SIGBUS when a page past its current end is touched, which
// happens when the file is truncated while it is read (`cp new.so old.so` does it). Guarded
// mappings get zero pages instead, and remember that the file shrank.

#include <cstddef>

namespace cudoctor::sys {

// Registers a mapping (page-aligned start, length in bytes); returns its slot, or -1 when
// every slot is taken (the caller then reads the file instead of mapping it).
int guard_mapping(void* start, std::size_t length);
// Forgets a slot (before munmap); -1 is ignored.
void unguard_mapping(int slot);
// Whether a page of the slot's mapping was replaced because the file shrank.
bool mapping_shrank(int slot);

}  // namespace cudoctor::sys
