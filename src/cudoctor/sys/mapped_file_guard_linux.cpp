#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "cudoctor/sys/mapped_file_guard.hpp"

namespace cudoctor::sys {
namespace {

struct Slot {
  std::atomic<std::uintptr_t> start{0};
  std::atomic<std::size_t> length{0};
  std::atomic<bool> shrank{false};
};

constexpr int k_slots = 4096;
Slot g_slots[k_slots];
std::uintptr_t g_page = 4096;
struct sigaction g_previous {};

// Async-signal-safe: atomics and mmap only. The rest of the mapping from the faulting page
// on is replaced by zeros at once, so a file cut from 1 GiB to 4 KiB faults once, not once
// per page.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (auto& s : g_slots) {
    const auto start = s.start.load(std::memory_order_acquire);
    const auto length = s.length.load(std::memory_order_acquire);
    if (start == 0 || addr < start || addr >= start + length) continue;
    const auto from = addr & ~(g_page - 1);
    const auto end = (start + length + g_page - 1) & ~(g_page - 1);
    void* p =
        ::mmap(reinterpret_cast<void*>(from), end - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      s.shrank.store(true, std::memory_order_release);
      return;  // the read is retried and sees zeros
    }
    break;
  }
  // Not a guarded mapping: whatever handled SIGBUS before us (or the default) handles it.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler) {
    return g_previous.sa_handler(sig);
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

void install() {
  g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

int guard_mapping(void* start, std::size_t length) {
  static std::once_flag once;
  std::call_once(once, install);
  if (!start || length == 0) return -1;
  for (int i = 0; i < k_slots; ++i) {
    std::uintptr_t empty = 0;
    auto& s = g_slots[i];
    // Claim the slot with a placeholder, then publish the real range.
    if (!s.start.compare_exchange_strong(empty, 1, std::memory_order_acq_rel)) continue;
    s.shrank.store(false, std::memory_order_relaxed);
    s.length.store(length, std::memory_order_release);
    s.start.store(reinterpret_cast<std::uintptr_t>(start), std::memory_order_release);
    return i;
  }
  return -1;
}

void unguard_mapping(int slot) {
  if (slot < 0 || slot >= k_slots) return;
  g_slots[slot].length.store(0, std::memory_order_release);
  g_slots[slot].start.store(0, std::memory_order_release);
}

bool mapping_shrank(int slot) {
  return slot >= 0 && slot < k_slots && g_slots[slot].shrank.load(std::memory_order_acquire);
}

}  // namespace cudoctor::sys
