// How long a check takes: gathering (on this machine, and on a server-sized tree), judging,
// rendering. Reported, not asserted. Run: build/bench/cudoctor_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/probe/pci_ids.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"
#include "cudoctor/sys/root_sys.hpp"

namespace fs = std::filesystem;
using namespace cudoctor;

namespace {

// A 8-GPU server's sysfs (plus 120 other PCI functions) and driver files, written once.
fs::path server_tree() {
  static const fs::path root = [] {
    fs::path r = fs::temp_directory_path() / fmt::format("cudoctor-bench-{}", ::getpid());
    const auto put = [&](const std::string& p, const std::string& s) {
      fs::create_directories((r / p.substr(1)).parent_path());
      std::ofstream(r / p.substr(1)) << s;
    };
    for (int i = 0; i < 128; ++i) {
      const auto addr = fmt::format("0000:{:02x}:00.0", i);
      const auto dir = "/sys/devices/pci0000:00/" + addr;
      const bool gpu = i % 16 == 3;
      put(dir + "/vendor", gpu ? "0x10de\n" : "0x8086\n");
      put(dir + "/device", gpu ? "0x2330\n" : "0x1234\n");
      put(dir + "/class", gpu ? "0x030200\n" : "0x060400\n");
      for (const char* a : {"subsystem_vendor", "subsystem_device"}) put(dir + "/" + a, "0x10de\n");
      put(dir + "/current_link_speed", "32.0 GT/s PCIe\n");
      put(dir + "/max_link_speed", "32.0 GT/s PCIe\n");
      put(dir + "/current_link_width", "16\n");
      put(dir + "/max_link_width", "16\n");
      fs::create_directories(r / "sys/bus/pci/devices");
      fs::create_symlink("../../../devices/pci0000:00/" + addr, r / "sys/bus/pci/devices" / addr);
    }
    put("/proc/modules", "nvidia_uvm 1523712 0 - Live 0x0 (POE)\nnvidia 56741888 278 nvidia_uvm, Live 0x0 (POE)\n");
    put("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023\n");
    put("/etc/os-release", "ID=ubuntu\nVERSION_ID=\"22.04\"\n");
    if (fs::exists("/usr/share/misc/pci.ids")) {
      fs::create_directories(r / "usr/share/misc");
      fs::copy_file("/usr/share/misc/pci.ids", r / "usr/share/misc/pci.ids");
    }
    return r;
  }();
  return root;
}

void run_check(benchmark::State& state, const std::string& root, bool child_probes) {
  const auto sys = sys::make_root_sys(root);
  probe::Options o;
  o.child_probes = child_probes;
  for (auto _ : state) {
    auto snap = probe::gather(*sys, o);
    const auto rep = report::build(std::move(snap), kb::builtin());
    auto text = render::text(rep, {});
    benchmark::DoNotOptimize(text);
  }
}

void BM_CheckThisMachine(benchmark::State& state) {
  run_check(state, "/", true);
}
void BM_CheckEightGpuServerTree(benchmark::State& state) {
  run_check(state, server_tree().string(), false);
}

void BM_PciIdsParseNvidia(benchmark::State& state) {
  std::ifstream in("/usr/share/misc/pci.ids");
  if (!in) {
    state.SkipWithError("no /usr/share/misc/pci.ids");
    return;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto _ : state) benchmark::DoNotOptimize(probe::PciIds::parse(text, {0x10de}));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

}  // namespace

BENCHMARK(BM_CheckThisMachine)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CheckEightGpuServerTree)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PciIdsParseNvidia)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {  // NOLINT: also runs ld_bench.cpp's benchmarks
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::error_code ec;
  fs::remove_all(server_tree(), ec);
  return 0;
}
