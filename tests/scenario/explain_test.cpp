// `cudoctor explain` as a user runs it: on corpus logs (tests/explain/corpus/), offline and
// joined with a fixture machine, and on input that is no log at all.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/plan/plan.hpp"
#include "fixture_root.hpp"
#include "machines.hpp"
#include "run_cli.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

std::string corpus(const std::string& name) {
  return std::string(CUDOCTOR_DATA_DIR) + "/../tests/explain/corpus/" + name;
}

nlohmann::json explain_json(std::vector<std::string> args, int want_rc = 0) {
  args.insert(args.begin(), "explain");
  args.push_back("--json");
  const auto r = run_cudoctor(args);
  EXPECT_EQ(r.exit_code, want_rc) << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out << r.err;
    return {};
  }
}

std::vector<std::string> ids(const nlohmann::json& ex) {
  std::vector<std::string> out;
  for (const auto& c : ex["causes"]) out.push_back(c["id"]);
  return out;
}

// A docker container started without --gpus on a host with an H100 and driver 535 (as
// ScenarioContainer.DockerStartedWithoutGpus builds it).
void build_docker_without_gpus(FixtureRoot& r) {
  build_docker_on_h100_host(r);
  r.dir("/dev");
}

TEST(ScenarioExplain, TheMachineConfirmsTheSecondCauseAndRulesOutTheFirst) {
  const auto log = corpus("pytorch/ai-dock-comfyui-79-found-no-driver-intel-gpu.log");
  const auto offline = explain_json({"--no-live", log});
  ASSERT_GE(offline["causes"].size(), 2u);
  EXPECT_EQ(offline["causes"][0]["id"], "no-nvidia-gpu");
  EXPECT_EQ(offline["causes"][0]["confidence"], "likely");
  EXPECT_EQ(offline["causes"][1]["id"], "container-no-gpu-access");
  EXPECT_EQ(offline["causes"][1]["confidence"], "possible");
  EXPECT_FALSE(offline["machine"]["joined"]);

  FixtureRoot r;
  build_docker_without_gpus(r);
  const auto joined = explain_json({"--root", r.path().string(), log});
  EXPECT_TRUE(joined["machine"]["joined"]);
  ASSERT_FALSE(joined["causes"].empty());
  const auto& top = joined["causes"][0];
  EXPECT_EQ(top["id"], "container-no-gpu-access") << joined.dump(1);
  EXPECT_EQ(top["confidence"], "confirmed");
  EXPECT_FALSE(top["machine_evidence"].empty()) << "the machine's own evidence stands beside the log's";
  EXPECT_TRUE(contains(top["fix"]["text"], "docker run --gpus all")) << top["fix"];
  const auto& refuted = joined["machine"]["refuted"];
  ASSERT_FALSE(refuted.empty());
  EXPECT_EQ(refuted[0]["id"], "no-nvidia-gpu");
  EXPECT_EQ(refuted[0]["refuted_by"], "gpus-present");
  for (const auto& id : ids(joined)) EXPECT_NE(id, "no-nvidia-gpu") << "a refuted cause drops";

  const auto text = run_cudoctor({"explain", "--root", r.path().string(), log});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_TRUE(contains(text.out, "[confirmed]  container-no-gpu-access")) << text.out;
  EXPECT_TRUE(contains(text.out, "Ruled out by this machine:\n  no-nvidia-gpu (this machine shows gpus-present)"))
      << text.out;
}

TEST(ScenarioExplain, SecureBootOnTheMachineOutranksTheModuleNotLoaded) {
  // "NVIDIA-SMI has failed" after a kernel upgrade: by the log alone the module is not
  // loaded; on a machine whose DKMS module Secure Boot refuses, that is the cause.
  const auto log = corpus("driver/gcp-gpu-installation-18-smi-failed-after-kernel-upgrade.log");
  const auto offline = explain_json({"--no-live", log});
  EXPECT_EQ(ids(offline)[0], "nvidia-module-not-loaded");
  EXPECT_EQ(ids(offline)[1], "module-blocked-by-secure-boot");
  FixtureRoot r;
  build_secure_boot_blocks_dkms(r);
  const auto joined = explain_json({"--root", r.path().string(), log});
  ASSERT_FALSE(joined["causes"].empty());
  EXPECT_EQ(joined["causes"][0]["id"], "module-blocked-by-secure-boot") << joined.dump(1);
  EXPECT_EQ(joined["causes"][0]["confidence"], "confirmed");
  bool mok = false;
  for (const auto& cmd : joined["causes"][0]["fix"]["commands"]) mok = mok || contains(cmd, "mokutil --import");
  EXPECT_TRUE(mok) << "the machine's own fix, built for it: " << joined["causes"][0]["fix"];
}

TEST(ScenarioExplain, ALogFromAnotherMachineIsSaidToBeOne) {
  // The log's nvidia-smi header says driver 550.144.03; the fixture's module is 535.104.05.
  FixtureRoot r;
  build_docker_without_gpus(r);
  const auto ex = explain_json({"--root", r.path().string(), corpus("tf-jax/colabdock-28-cpu-only-jax.log")});
  EXPECT_FALSE(ex["machine"]["joined"]);
  EXPECT_TRUE(contains(ex["machine"]["other_machine"], "the log's driver is 550.144.03")) << ex["machine"];
  EXPECT_TRUE(contains(ex["machine"]["other_machine"], "this machine's is 535.104.05"));
  EXPECT_EQ(ex["causes"][0]["id"], "cpu-only-build");
  EXPECT_NE(ex["causes"][0]["confidence"], "confirmed");
}

TEST(ScenarioExplain, DriverApiArithmeticNamesTheBranchAndAWheelThatRuns) {
  const auto ex = explain_json({"--no-live", corpus("pytorch/gpt-sovits-83-driver-too-old-11040.log")});
  EXPECT_EQ(ex["causes"][0]["id"], "framework-cuda-too-new-for-driver");
  const auto& sig = ex["signatures"][0];
  EXPECT_EQ(sig["captures"]["api"]["value"], "11040");
  std::string numbers;
  for (const auto& a : ex["arithmetic"]) numbers += a.get<std::string>() + "\n";
  EXPECT_TRUE(contains(numbers, "\"found version 11040\" is the driver API version: CUDA 11.4")) << numbers;
  EXPECT_TRUE(contains(numbers, "R470")) << numbers;
  // The wheel named is the one `check` would recommend for a driver that gives CUDA 11.4: one
  // judgement (plan::recommended), not a second table.
  const auto& kb = kb::builtin();
  const auto floor = kb.min_driver_for_cuda(*util::Version::parse("11.4"));
  ASSERT_TRUE(floor);
  const auto build = plan::recommended(kb, "torch", {}, floor);
  ASSERT_TRUE(build);
  EXPECT_TRUE(contains(numbers, "Instead, PyTorch " + build->release + " built for CUDA " + build->cuda.str() +
                                    " runs on a driver that gives CUDA 11.4"))
      << numbers;
  EXPECT_TRUE(contains(numbers, build->install)) << numbers;
}

TEST(ScenarioExplain, AnArchitectureTheWheelLacksGetsTheBuildThatHasIt) {
  FixtureRoot r;
  r.file("/log",
         "| NVIDIA-SMI 570.86.10              Driver Version: 570.86.10      CUDA Version: 12.8     |\n"
         "|   0  NVIDIA GeForce RTX 5090        Off |   00000000:01:00.0  On |                  N/A |\n"
         "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
         "PyTorch installation.\n");
  const auto ex = explain_json({"--no-live", r.host("/log").string()});
  EXPECT_EQ(ex["causes"][0]["id"], "framework-no-kernels-for-gpu");
  std::string numbers;
  for (const auto& a : ex["arithmetic"]) numbers += a.get<std::string>() + "\n";
  EXPECT_TRUE(contains(numbers, "NVIDIA GeForce RTX 5090 (line 2) is compute capability 12.0 (Blackwell).")) << numbers;
  const auto build =
      plan::recommended(kb::builtin(), "torch", {*util::Version::parse("12.0")}, util::Version::parse("570.86.10"));
  ASSERT_TRUE(build);
  EXPECT_TRUE(contains(numbers, "PyTorch " + build->release + " built for CUDA " + build->cuda.str() +
                                    " runs on compute capability 12.0 with driver 570.86.10: " + build->install))
      << numbers;
}

TEST(ScenarioExplain, AProgramFaultIsNotDressedUpAsADriverProblem) {
  const auto log = corpus("program/tegnas-19-illegal-memory-access-zero-grad.log");
  const auto ex = explain_json({"--no-live", log});
  const auto& top = ex["causes"][0];
  EXPECT_EQ(top["id"], "program-illegal-memory-access");
  EXPECT_TRUE(top["program_fault"]);
  EXPECT_EQ(top["layer"], "L5");
  EXPECT_TRUE(contains(top["fix"]["text"], "CUDA_LAUNCH_BLOCKING=1")) << top["fix"];
  const auto text = run_cudoctor({"explain", "--no-live", log});
  EXPECT_TRUE(contains(text.out, "This is the program or its workload, not the CUDA environment.")) << text.out;
}

TEST(ScenarioExplain, EveryMatchIsCollectedWithItsLine) {
  // A kernel log with an API mismatch wrapped over NVRM: lines, then the nvidia-smi failure.
  FixtureRoot r;
  r.file("/log",
         "[  4.71] NVRM: API mismatch: the client has the version 535.54.03, but\n"
         "[  4.71] NVRM: this kernel module has the version 530.41.03.  Please\n"
         "[  4.71] NVRM: make sure that this kernel module and all NVIDIA driver\n"
         "[  4.71] NVRM: components have the same version.\n"
         "$ nvidia-smi\n"
         "Failed to initialize NVML: Driver/library version mismatch\n");
  const auto ex = explain_json({"--no-live", r.host("/log").string()});
  ASSERT_GE(ex["signatures"].size(), 2u) << ex.dump(1);
  EXPECT_EQ(ex["signatures"][0]["line"], 1) << "the joined kernel message keeps its first line";
  EXPECT_EQ(ex["signatures"][ex["signatures"].size() - 1]["line"], 6);
  EXPECT_EQ(ex["causes"][0]["id"], "driver-version-mismatch");
  EXPECT_EQ(ex["causes"][0]["evidence"].size(), 2u) << "both lines show the one cause";
}

TEST(ScenarioExplain, NothingMatchedSaysWhatWasRead) {
  FixtureRoot r;
  r.file("/log", "Epoch 1/10\nloss: 0.31\nValueError: could not broadcast input array from shape (3,) into (4,)\n");
  const auto res = run_cudoctor({"explain", "--no-live", r.host("/log").string()});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_TRUE(contains(res.out, "3 lines read, 0 signatures matched")) << res.out;
  EXPECT_TRUE(contains(res.out, "Lines that look like errors:")) << res.out;
  EXPECT_TRUE(contains(res.out, "3 | ValueError: could not broadcast")) << res.out;
}

TEST(ScenarioExplain, MarkdownGivesTheSameCauses) {
  const auto res = run_cudoctor(
      {"explain", "--no-live", "--format", "markdown", corpus("pytorch/gpt-sovits-83-driver-too-old-11040.log")});
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_TRUE(contains(
      res.out, "### 1. The framework's CUDA needs a newer driver — likely (`framework-cuda-too-new-for-driver`, L3)"))
      << res.out;
}

TEST(ScenarioExplain, InputThatIsNoLogGetsAClearMessage) {
  FixtureRoot r;
  r.file("/empty", "");
  r.dir("/a-directory");
  r.fifo("/fifo-without-writer");
  const std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  r.file("/bug-report.log.gz", gz + std::string(100, 'x'));
  const struct {
    std::string path, message;
  } cases[] = {
      {"/bin/true", "is not a text log: "},
      {r.host("/empty").string(), "is empty: nothing to explain"},
      {r.host("/a-directory").string(), "a directory, not a log"},
      {r.host("/fifo-without-writer").string(), "is empty: nothing to explain"},
      {r.host("/bug-report.log.gz").string(), "is gzip-compressed: zcat "},
      {r.host("/no-such-file").string(), "No such file or directory"},
  };
  for (const auto& c : cases) {
    const auto res = run_cudoctor({"explain", "--no-live", c.path});
    EXPECT_EQ(res.exit_code, 2) << c.path << "\n" << res.out << res.err;
    EXPECT_TRUE(contains(res.err, c.message)) << c.path << ": " << res.err;
    EXPECT_EQ(res.out, "") << c.path;
  }
}

TEST(ScenarioExplain, AnEndlessStreamIsReadUpToTheLimitAndSaysSo) {
  // 300 MB of log lines through a pipe: read to 256 MiB, then the answer says where it stopped.
  const auto out =
      shell_output("yes 'W0000 00:00:1711000000.123456  4242 trainer.py:12] step done' | head -c 300000000 | " +
                   cudoctor_binary() + " explain --no-live - ; echo rc=$?");
  EXPECT_TRUE(contains(out, "Only the first 256 MiB were read")) << out.substr(0, 2000);
  EXPECT_TRUE(contains(out, "rc=1")) << out.substr(out.size() > 200 ? out.size() - 200 : 0);
}

TEST(ScenarioExplain, ATerminalWithNoInputGetsUsageNotAWait) {
  if (shell_output("command -v script").empty()) GTEST_SKIP() << "script(1) is not installed";
  // script gives cudoctor a terminal as standard input, as an interactive shell would.
  const auto out =
      shell_output("timeout 20 script -qec '" + cudoctor_binary() + " explain' /dev/null </dev/null 2>&1; echo rc=$?");
  EXPECT_TRUE(contains(out, "cudoctor explain reads an error log and names its cause")) << out;
  EXPECT_TRUE(contains(out, "python train.py 2>&1 | cudoctor explain -")) << out;
}

}  // namespace
}  // namespace cudoctor::testing
