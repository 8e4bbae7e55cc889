// `cudoctor plan` and `cudoctor kb` as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frozen_kb.hpp"
#include "machines.hpp"
#include "scenario.hpp"

// The plan tests read the knowledge base frozen under tests/fixtures/kb/ (--kb), so a correct
// change to the live data does not change what they expect.
namespace cudoctor::testing {
namespace {

std::vector<std::string> frozen(std::vector<std::string> args) {
  args.insert(args.begin(), {"--kb", frozen_kb_dir()});
  return args;
}

nlohmann::json plan_json(const std::vector<std::string>& args, int expect_rc = 0) {
  auto full = frozen({"plan", "--json"});
  full.insert(full.end(), args.begin(), args.end());
  const auto r = run_cudoctor(full);
  EXPECT_EQ(r.exit_code, expect_rc) << r.err;
  return nlohmann::json::parse(r.out);
}

nlohmann::json find_build(const nlohmann::json& p, const std::string& fw, const std::string& release,
                          const std::string& cuda) {
  for (const auto& b : p["builds"])
    if (b["framework"] == fw && b["release"] == release && b["cuda"] == cuda) return b;
  return nullptr;
}

TEST(ScenarioPlan, ArticleMachine) {
  const auto p = plan_json({"--gpu", "RTX 4060 Laptop GPU", "--driver", "535.104.05"});
  EXPECT_EQ(p["inputs"]["cc"], "8.9");
  EXPECT_EQ(p["driver_max_cuda"], "12.2");
  const auto b = find_build(p, "torch", "2.5", "12.1");
  EXPECT_EQ(b["fit"], "works");
  EXPECT_EQ(b["install"], "pip install \"torch==2.5.*\" --index-url https://download.pytorch.org/whl/cu121");
  EXPECT_EQ(find_build(p, "torch", "2.9", "13.0")["fit"], "no");
  const auto text =
      run_cudoctor(frozen({"plan", "--gpu", "RTX 4060 Laptop GPU", "--driver", "535.104.05", "--color", "never"}));
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_TRUE(contains(text.out, "  ✓ 12.2, 12.1, 12.0, 11.8\n"));
  EXPECT_TRUE(contains(text.out, "driver ≥ 580.65.06 unlocks"));
}

TEST(ScenarioPlan, Rtx5090OnOldDriver) {
  const auto p = plan_json({"--gpu", "RTX 5090", "--driver", "550.54.14"}, 1);
  EXPECT_FALSE(p["driver_runs_gpu"].get<bool>());
  EXPECT_EQ(p["unlocks"][0]["driver"], "570.26");
  const auto text = run_cudoctor(frozen({"plan", "--gpu", "RTX 5090", "--driver", "550.54.14", "--color", "never"}));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_TRUE(contains(
      text.out, "No build runs: driver 550.54.14 is older than any that runs Blackwell GPUs (sm_120 needs ≥ 570.26)."));
}

TEST(ScenarioPlan, Kepler) {
  const auto text = run_cudoctor(frozen({"plan", "--cc", "3.5", "--color", "never"}));
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_TRUE(contains(text.out, "✓ 11.8, 11.7, 11.6, 11.5, 11.4, 11.3, 11.2, 11.1, 11.0, 10.2, 10.1, 10.0"));
  EXPECT_TRUE(contains(text.out, "R470"));
}

TEST(ScenarioPlan, FromThisMachinesFacts) {
  if (!can_make_device_nodes()) GTEST_SKIP() << "device nodes need root (mknod)";
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x28e0, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_driver_libraries(r, "535.104.05", nvml_sim_library());
  ASSERT_TRUE(add_device_nodes(r, 1));
  const auto run =
      run_cudoctor(frozen({"plan", "--root", r.path().string(), "--runtime", "--json", "--framework", "torch==2.5"}),
                   {{"NVML_SIM_NAME", "NVIDIA GeForce RTX 4060 Laptop GPU"}, {"NVML_SIM_CC", "8.9"}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto p = nlohmann::json::parse(run.out);
  EXPECT_EQ(p["inputs"]["gpu"], "NVIDIA GeForce RTX 4060 Laptop GPU");
  EXPECT_EQ(p["inputs"]["gpu_source"], "NVML");
  EXPECT_EQ(p["inputs"]["driver"], "535.104.05");
  EXPECT_EQ(p["inputs"]["driver_source"], "/proc/driver/nvidia/version");
  EXPECT_EQ(p["builds"].size(), 3u);
}

TEST(ScenarioPlan, BadInputIsAClearError) {
  const auto gpu = run_cudoctor(frozen({"plan", "--gpu", "Voodoo 3"}));
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_TRUE(contains(gpu.err, "no GPU in the knowledge base matches 'Voodoo 3'"));
  EXPECT_EQ(run_cudoctor(frozen({"plan", "--cc", "8"})).exit_code, 2);
  EXPECT_EQ(run_cudoctor(frozen({"plan", "--driver", "five-three-five"})).exit_code, 2);
  EXPECT_EQ(run_cudoctor(frozen({"plan", "--cc", "8.9", "--framework", "caffe"})).exit_code, 2);
  FixtureRoot empty;
  add_debian_12(empty);
  const auto none = run_cudoctor(frozen({"plan", "--root", empty.path().string()}));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.err, "no NVIDIA GPU or driver found here"));
}

TEST(ScenarioKb, SingleAnswers) {
  const auto e = run_cudoctor(frozen({"kb", "error", "35"}));
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_TRUE(contains(e.out, "runtime API 35 cudaErrorInsufficientDriver"));
  const auto n = run_cudoctor(frozen({"kb", "error", "NVML_ERROR_LIB_RM_VERSION_MISMATCH"}));
  EXPECT_TRUE(contains(n.out, "NVML 18 NVML_ERROR_LIB_RM_VERSION_MISMATCH"));
  const auto g = run_cudoctor(frozen({"kb", "gpu", "10de:2684"}));
  EXPECT_TRUE(contains(g.out, "AD102 [GeForce RTX 4090]"));
  EXPECT_TRUE(contains(g.out, "compute capability 8.9 (sm_89)"));
  const auto d = run_cudoctor(frozen({"kb", "driver", "535.104.05"}));
  EXPECT_TRUE(contains(d.out, "newest CUDA supported natively: 12.2"));
  EXPECT_EQ(run_cudoctor(frozen({"kb", "gpu", "Voodoo 3"})).exit_code, 1);
  const auto s = run_cudoctor(frozen({"kb", "-v"}));
  EXPECT_TRUE(contains(s.out, "compiled 2026-11-29"));
  EXPECT_TRUE(contains(s.out, "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html"));
}

TEST(ScenarioKb, OverrideDirectory) {
  FixtureRoot dir;
  // A GPU the built-in data does not know, added by the user without a rebuild.
  dir.file("/gpus.json", R"({"records": [{"pci_id": "0x9999", "name": "GB999 [Future GPU]", "architecture": "Blackwell",
                                          "cc": "12.0", "source": "https://example.org/future"}]})");
  const auto g = run_cudoctor({"--kb", dir.path().string(), "kb", "gpu", "10de:9999"});
  EXPECT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(contains(g.out, "GB999 [Future GPU]"));
  dir.file("/gpus.json",
           R"({"records": [{"pci_id": "0x9999", "name": "x", "architecture": "Blackwell", "cc": "12.0"}]})");
  const auto bad = run_cudoctor({"--kb", dir.path().string(), "kb"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.err, "gpus.json record 0: no \"source\"")) << bad.err;
}

}  // namespace
}  // namespace cudoctor::testing
