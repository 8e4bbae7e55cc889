// NVIDIA_VISIBLE_DEVICES inside a container, as the NVIDIA Container Toolkit reads it: void and
// empty inject nothing, none injects the driver without a GPU. Named as the cause, with the
// variable and its source.
#include <gtest/gtest.h>

#include "../support/machines.hpp"
#include "../support/scenario.hpp"

namespace cudoctor::testing {
namespace {

TEST(ScenarioVisibleDevices, VoidIsWhyTheContainerHasNoGpu) {
  FixtureRoot r;
  build_docker_on_h100_host(r);
  const auto c = check_root(r, {"--no-runtime"}, {{"NVIDIA_VISIBLE_DEVICES", "void"}});
  EXPECT_EQ(c.report["verdict"]["break_finding"], "container-no-gpu-access") << c.ids();
  const auto f = c.finding("container-no-gpu-access");
  EXPECT_EQ(f["title"], "NVIDIA_VISIBLE_DEVICES=void: the container was given no GPU");
  EXPECT_TRUE(contains(joined_evidence(f), "NVIDIA_VISIBLE_DEVICES=void (environment): nothing injected"))
      << joined_evidence(f);
}

TEST(ScenarioVisibleDevices, NoneGivesTheDriverWithoutAGpu) {
  REQUIRE_DEVICE_NODES();
  FixtureRoot r;
  build_docker_on_h100_host(r);
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
  ASSERT_TRUE(r.char_device("/dev/nvidiactl", 195, 255, 0666));
  ASSERT_TRUE(r.char_device("/dev/nvidia-uvm", 508, 0, 0666));
  const auto c = check_root(r, {"--no-runtime"}, {{"NVIDIA_VISIBLE_DEVICES", "none"}});
  EXPECT_EQ(c.report["verdict"]["break_finding"], "container-visible-devices-none") << c.ids();
  const auto f = c.finding("container-visible-devices-none");
  ASSERT_FALSE(f.is_null()) << c.ids();
  EXPECT_EQ(f["severity"], "error");
  EXPECT_TRUE(contains(joined_evidence(f), "NVIDIA_VISIBLE_DEVICES=none (environment)")) << joined_evidence(f);
  EXPECT_TRUE(contains(f["fix"]["text"], "on the host, docker run --gpus all -e NVIDIA_VISIBLE_DEVICES=all <image>"))
      << f["fix"]["text"];
  EXPECT_TRUE(f["fix"]["commands"].empty());
  // With a GPU node passed in anyway, none is not the story.
  ASSERT_TRUE(r.char_device("/dev/nvidia0", 195, 0, 0666));
  EXPECT_FALSE(
      check_root(r, {"--no-runtime"}, {{"NVIDIA_VISIBLE_DEVICES", "none"}}).has("container-visible-devices-none"));
}

}  // namespace
}  // namespace cudoctor::testing
