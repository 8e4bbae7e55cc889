// Forward compatibility in containers: an image's cuda-compat libcuda (with the
// .note.cuda.fwd_compatibility ELF note NVIDIA's compat libraries carry, added here with
// objcopy) taken by the loader over the host's older driver. On a GeForce host it cannot work
// (error 804) and the fix is the host's driver or another image, never a reboot; on a
// data-center GPU over a listed branch it is forward compatibility, not a mismatch.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>

#include "../support/machines.hpp"
#include "../support/scenario.hpp"
#include "../support/venvs.hpp"

namespace cudoctor::testing {
namespace {

// An ELF note as the kernel's elf(5) lays it out: name and descriptor each padded to 4.
void write_note(const std::string& path, const std::string& owner, const std::string& desc) {
  std::ofstream out(path, std::ios::binary);
  const auto u32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  const auto padded = [&](const std::string& s) {
    out.write(s.data(), static_cast<std::streamsize>(s.size()));
    for (std::size_t i = s.size(); i % 4; ++i) out.put('\0');
  };
  u32(static_cast<std::uint32_t>(owner.size() + 1));
  u32(static_cast<std::uint32_t>(desc.size()));
  u32(1);
  padded(owner + std::string(1, '\0'));
  padded(desc);
}

// A container (docker) on a host whose kernel module is host_driver, with the image's
// cuda-compat for CUDA 12.4 (libcuda 550.54.15) in /usr/local/cuda-12.4/compat; the GPU is
// given by its PCI device id.
void build_compat_container(FixtureRoot& r, const std::string& host_driver, unsigned device, unsigned cls) {
  add_ubuntu_2204(r, "5.15.0-105-generic", "4b1c2d3e5f60");
  add_cpuinfo(r, false);
  add_pci_ids(r);
  r.file("/.dockerenv", "");
  add_pci(r, {.address = "0000:01:00.0", .device = device, .class_code = cls, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, host_driver);
  add_driver_libraries(r, host_driver, nvml_sim_library());  // what the toolkit mounts from the host
  const std::string dir = "/usr/local/cuda-12.4/compat/";
  r.dir(dir);
  write_note(r.host("/note.bin").string(), "NVIDIA Corporation",
             R"({"format":1,"CUDA Version":"12.4","driver":[470,525,535],"device":[7,8,9]})");
  run_sh("objcopy --add-section .note.cuda.fwd_compatibility='" + r.host("/note.bin").string() + "' '" +
         cuda_sim_library() + "' '" + r.host(dir + "libcuda.so.550.54.15").string() + "'");
  r.link(dir + "libcuda.so.1", "libcuda.so.550.54.15");
  r.link("/usr/local/cuda", "cuda-12.4");
}

const std::map<std::string, std::string> k_compat_path = {{"LD_LIBRARY_PATH", "/usr/local/cuda/compat"}};

TEST(ScenarioCompat, Cuda124ImageWithCompatOnGeForceHostWithR470IsTheHostDriverNotAReboot) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_compat_container(r, "470.256.02", 0x2204, 0x030000);
  ASSERT_TRUE(add_device_nodes(r, 1));
  auto env = k_compat_path;
  env["NVML_SIM_NAME"] = "NVIDIA GeForce RTX 3090";
  env["NVML_SIM_DRIVER"] = "470.256.02";
  env["NVML_SIM_CUDA"] = "11040";
  env["CUDA_SIM_MODE"] = "compat_unsupported";
  const auto c = check_root(r, {}, env);
  EXPECT_EQ(c.report["verdict"]["break_finding"], "cuda-compat-unusable") << c.ids();
  EXPECT_FALSE(c.has("driver-version-mismatch")) << "compat is newer by design: " << c.ids();
  const auto f = c.finding("cuda-compat-unusable");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["title"],
            "The cuda-compat libcuda 550.54.15 cannot run over the host's driver 470.256.02: the NVIDIA GeForce RTX "
            "3090 is not a GPU forward compatibility runs on (data-center GPUs only): cuInit fails with error 804, "
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev,
                       "/usr/local/cuda-12.4/compat/libcuda.so.550.54.15: .note.cuda.fwd_compatibility: CUDA "
                       "12.4, host drivers [470, 525, 535]"))
      << ev;
  EXPECT_TRUE(contains(ev, "/proc/driver/nvidia/version: NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02"))
      << ev;
  EXPECT_EQ(
      f["fix"]["text"],
      "On the host: upgrade the host's driver to 550.54.14 or newer (what CUDA 12.4 needs, with its own libcuda), "
      "or use an image built for CUDA 11.4 or older (what the host's driver 470.256.02 supports).");
  EXPECT_TRUE(f["fix"]["commands"].empty()) << "the host's driver is not changed from inside the container";
  for (const auto& x : c.report["findings"])
    EXPECT_FALSE(contains(x["fix"].dump(), "reboot")) << x["id"] << " tells to reboot: " << x["fix"];
  const auto l4 = c.finding("cuda-forward-compat-unsupported");
  ASSERT_FALSE(l4.is_null()) << c.ids();
  EXPECT_EQ(l4["follows_from"], "cuda-compat-unusable");
}

TEST(ScenarioCompat, DataCenterGpuOverAListedBranchIsForwardCompatibility) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_compat_container(r, "535.104.05", 0x2330, 0x030200);
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {"--no-runtime"}, k_compat_path);
  EXPECT_FALSE(c.has("driver-version-mismatch")) << c.ids();
  EXPECT_FALSE(c.has("cuda-compat-unusable")) << c.ids();
  const auto f = c.finding("cuda-compat-in-use");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["title"],
            "Forward compatibility: libcuda 550.54.15 (CUDA 12.4) from cuda-compat over the host's driver 535.104.05");
}

TEST(ScenarioCompat, AHostDriverOutsideTheNoteIsNamed) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_compat_container(r, "545.23.08", 0x2330, 0x030200);
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto c = check_root(r, {"--no-runtime"}, k_compat_path);
  const auto f = c.finding("cuda-compat-unusable");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(f["title"], "its note lists host driver branches 470, 525, 535, not R545")) << f["title"];
}

TEST(ScenarioCompat, AMalformedNoteIsSaidAndTheDirectoryStillTells) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_compat_container(r, "470.256.02", 0x2204, 0x030000);
  ASSERT_TRUE(add_device_nodes(r, 1));
  // A note whose descriptor claims more bytes than its section holds.
  {
    std::ofstream out(r.host("/bad.bin").string(), std::ios::binary);
    const std::uint32_t hdr[3] = {19, 4096, 1};
    out.write(reinterpret_cast<const char*>(hdr), sizeof hdr);
    out.write("NVIDIA Corporation\0\0", 20);
  }
  const auto lib = r.host("/usr/local/cuda-12.4/compat/libcuda.so.550.54.15").string();
  run_sh("objcopy --remove-section .note.cuda.fwd_compatibility --add-section .note.cuda.fwd_compatibility='" +
         r.host("/bad.bin").string() + "' '" + lib + "'");
  auto env = k_compat_path;
  env["NVML_SIM_NAME"] = "NVIDIA GeForce RTX 3090";
  const auto c = check_root(r, {"--no-runtime"}, env);
  const auto f = c.finding("cuda-compat-unusable");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(contains(joined_evidence(f),
                       "in a compat directory, note unreadable: .note.cuda.fwd_compatibility: a "
                       "note runs past the end of its section"))
      << joined_evidence(f);
}

}  // namespace
}  // namespace cudoctor::testing
