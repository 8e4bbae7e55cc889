// CDI specifications generated for another driver (issue 13): found on the host by `check`,
// and the engine's error in a log confirmed by `explain` on the same host.
#include <gtest/gtest.h>

#include "fixture_root.hpp"
#include "machines.hpp"
#include "run_cli.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

// The spec as `nvidia-ctk cdi generate` writes it (YAML, block style), for a driver version.
std::string nvidia_ctk_spec(const std::string& driver) {
  const std::string lib = "/usr/lib/x86_64-linux-gnu/";
  std::string mounts;
  for (const char* name : {"libcuda.so.", "libnvidia-ml.so.", "libnvidia-ptxjitcompiler.so.", "libEGL_nvidia.so."})
    mounts += "  - containerPath: " + lib + name + driver + "\n    hostPath: " + lib + name + driver +
              "\n    options:\n    - ro\n    - nosuid\n    - nodev\n    - bind\n";
  return "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n  - path: "
         "/dev/nvidia-uvm\n"
         "  hooks:\n  - args:\n    - nvidia-ctk\n    - hook\n    - update-ldcache\n    - --folder\n    - "
         "/usr/lib/x86_64-linux-gnu\n"
         "    hookName: createContainer\n    path: /usr/bin/nvidia-ctk\n  mounts:\n" +
         mounts +
         "devices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: \"0\"\n- containerEdits:\n"
         "    deviceNodes:\n    - path: /dev/nvidia0\n  name: all\nkind: nvidia.com/gpu\n";
}

// A host with driver 550.54.14 installed and loaded, the Container Toolkit's nvidia-ctk, and
// the CDI spec given.
void build_host(FixtureRoot& r, const std::string& spec_path, const std::string& spec) {
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "550.54.14");
  add_driver_libraries(r, "550.54.14", nvml_sim_library());
  r.file("/usr/bin/nvidia-ctk", "", 0755);
  r.file(spec_path, spec);
}

TEST(ScenarioCdi, ASpecOfThePreviousDriverIsStale) {
  FixtureRoot r;
  build_host(r, "/etc/cdi/nvidia.yaml", nvidia_ctk_spec("535.104.05"));
  const auto c = check_root(r, {"--no-runtime"});
  const auto f = c.finding("cdi-spec-stale");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["title"], "/etc/cdi/nvidia.yaml was generated for driver 535.104.05, not the installed 550.54.14");
  const auto ev = joined_evidence(f);
  EXPECT_TRUE(contains(ev, "/etc/cdi/nvidia.yaml: kind nvidia.com/gpu, 4 driver libraries of 535.104.05")) << ev;
  EXPECT_TRUE(contains(ev, "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05: listed in /etc/cdi/nvidia.yaml, missing"))
      << ev;
  EXPECT_TRUE(contains(ev, "installed driver: 550.54.14")) << ev;
  ASSERT_EQ(f["fix"]["commands"].size(), 1u) << f["fix"];
  EXPECT_TRUE(contains(f["fix"]["commands"][0], "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")) << f["fix"];
  EXPECT_EQ(c.report["driver"]["cdi_specs"][0]["driver_versions"][0], "535.104.05");
}

TEST(ScenarioCdi, ASpecOfTheInstalledDriverIsNotReported) {
  FixtureRoot r;
  build_host(r, "/etc/cdi/nvidia.yaml", nvidia_ctk_spec("550.54.14"));
  r.file("/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.550.54.14", "");
  r.file("/usr/lib/x86_64-linux-gnu/libEGL_nvidia.so.550.54.14", "");
  const auto c = check_root(r, {"--no-runtime"});
  EXPECT_FALSE(c.has("cdi-spec-stale")) << c.ids();
  EXPECT_EQ(c.report["driver"]["cdi_specs"][0]["libraries"], 4);
  EXPECT_TRUE(c.report["driver"]["cdi_specs"][0]["missing"].empty());
}

TEST(ScenarioCdi, AJsonSpecInVarRunIsReadToo) {
  FixtureRoot r;
  build_host(
      r, "/var/run/cdi/nvidia.json",
      R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"all","containerEdits":{"deviceNodes":)"
      R"([{"path":"/dev/nvidia0"}]}}],"containerEdits":{"mounts":[{"hostPath":)"
      R"("/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05","containerPath":)"
      R"("/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05","options":["ro","nosuid","nodev","bind"]}]}})");
  const auto c = check_root(r, {"--no-runtime"});
  const auto f = c.finding("cdi-spec-stale");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_TRUE(
      contains(joined_evidence(f), "/var/run/cdi/nvidia.json: kind nvidia.com/gpu, 1 driver libraries of 535.104.05"))
      << joined_evidence(f);
}

TEST(ScenarioCdi, TheEnginesErrorIsConfirmedOnTheHost) {
  FixtureRoot r;
  build_host(r, "/etc/cdi/nvidia.yaml", nvidia_ctk_spec("535.104.05"));
  refresh_ld_cache(r);
  const auto log = std::string(CUDOCTOR_DATA_DIR) +
                   "/../tests/explain/corpus/container/webkit-container-sdk-23-cdi-stale-libegl.log";
  const auto res = run_cudoctor({"explain", "--root", r.path().string(), "--no-runtime", log, "--json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  const auto ex = nlohmann::json::parse(res.out);
  EXPECT_EQ(ex["causes"][0]["id"], "cdi-spec-stale");
  EXPECT_EQ(ex["causes"][0]["confidence"], "confirmed");
  EXPECT_TRUE(contains(ex["causes"][0]["fix"]["commands"][0], "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"));
}

}  // namespace
}  // namespace cudoctor::testing
