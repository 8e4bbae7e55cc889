// One judgement: for every framework build of the knowledge base whose kernels are published,
// on every GPU the knowledge base knows and a driver of every branch, `plan` and `check` give
// the same verdict. `check` judges a snapshot of a machine with that GPU, that driver and that
// build installed (its binaries carrying the published cubins and PTX), made from the real
// H200 snapshot; `plan` judges the same three from the knowledge base alone.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "cudoctor/plan/plan.hpp"
#include "cudoctor/report/report.hpp"
#include "cudoctor/rules/rules.hpp"
#include "snapshots.hpp"

namespace cudoctor::rules {
namespace {

using util::Version;

// A machine with one GPU of this model, this driver, and this build in a venv.
snapshot::Snapshot machine(const snapshot::Snapshot& base, const kb::KnowledgeBase& kb, const kb::GpuModel& gpu,
                           const Version& driver, const kb::Framework& fw, const kb::FrameworkRelease& r,
                           const kb::FrameworkVariant& v) {
  auto s = base;
  const bool runs_gpu = !kb.driver_vs_cc(driver, gpu.cc);
  auto g = s.gpus.front();
  g.pci.device_id = gpu.pci_id;
  g.pci.device_name = gpu.name;
  g.pci.driver = runs_gpu ? "nvidia" : "";  // a driver that cannot run a GPU does not bind it
  if (runs_gpu) {
    g.nvml->compute_capability = gpu.cc.str();
    g.nvml->name = gpu.name;
  } else {
    g.nvml.reset();
  }
  s.gpus = {g};
  s.driver.kernel_module.version = driver.str();
  s.driver.kernel_module.version_line = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + driver.str();
  for (auto& l : s.driver.libraries) {
    l.version = driver.str();
    l.real_path = l.path + "." + driver.str();
  }
  s.driver.nvml.driver_version = driver.str();
  const auto max = kb.max_cuda_for_driver(driver);
  s.driver.nvml.cuda_driver_version = max ? max->major() * 1000 + max->minor() * 10 : 0;
  s.driver.nvml.gpus.clear();
  if (runs_gpu) s.driver.nvml.gpus = {*g.nvml};
  s.toolkit = {};
  s.runtime = {};
  snapshot::Framework f;
  f.name = fw.name;
  f.version = r.version;
  f.cuda = v.cuda.str();
  f.location = "/opt/venv/lib/python3.12/site-packages/" + fw.name;
  f.source = fw.name + "/version.py";
  for (const auto& a : *v.archs) f.sm_archs.push_back(fmt::format("sm_{}{}", a.major(), a.minor()));
  if (v.ptx) f.ptx_archs.push_back(fmt::format("compute_{}{}", v.ptx->major(), v.ptx->minor()));
  snapshot::PythonEnv env;
  env.prefix = "/opt/venv";
  env.interpreter = "/opt/venv/bin/python3";
  env.version = "3.12";
  env.kind = "venv";
  env.frameworks = {f};
  s.python = {};
  s.python.envs = {env};
  return s;
}

TEST(PlanAgreesWithCheck, EveryPublishedBuildOnEveryGpuAndDriverBranch) {
  const auto& kb = kb::builtin();
  const auto base = testing::h200_snapshot();
  // One GPU per compute capability (the verdicts depend on nothing else of the model).
  std::map<std::string, const kb::GpuModel*> gpus;
  for (const auto& g : kb.gpus()) gpus.emplace(g.cc.str(), &g);
  // A driver of every branch: the first driver of the newest CUDA it supports natively.
  std::vector<Version> drivers;
  // Where the exact minimum is not established (only the branch is), its first version, as
  // a driver reports it: "615.00".
  for (const auto& b : kb.driver_branches())
    if (auto d = kb.min_driver_for_cuda(b.max_cuda)) {
      if (d->parts.size() == 1) d = Version::parse(std::to_string(d->major()) + ".00");
      if (std::find(drivers.begin(), drivers.end(), *d) == drivers.end()) drivers.push_back(*d);
    }
  ASSERT_GE(drivers.size(), 5u);
  std::size_t pairs = 0, runs = 0;
  for (const auto& fw : kb.frameworks())
    for (const auto& [cc, gpu] : gpus)
      for (const auto& driver : drivers) {
        plan::Inputs in;
        in.cc = gpu->cc;
        in.driver = driver;
        in.framework = fw.name;
        in.toolkits = false;
        const auto p = plan::make_plan(in, kb);  // every release of the framework at once
        for (const auto& r : fw.releases)
          for (const auto& v : r.variants) {
            if (!v.archs) continue;  // nothing for check to find in the binaries
            const plan::BuildLine* line = nullptr;
            for (const auto& b : p.builds)
              if (b.release == r.version && b.cuda == v.cuda) line = &b;
            ASSERT_NE(line, nullptr) << fw.name << " " << r.version << " " << v.cuda.str();
            const auto rep = report::build(machine(base, kb, *gpu, driver, fw, r, v), kb);
            const bool plan_runs = line->fit != plan::Fit::no;
            ASSERT_EQ(plan_runs, rep.verdict.healthy)
                << fw.name << " " << r.version << " CUDA " << v.cuda.str() << " on " << gpu->name << " (cc " << cc
                << "), driver " << driver.str() << ": plan says " << (plan_runs ? "runs" : "does not run: " + line->why)
                << "; check says " << rep.verdict.summary;
            ++pairs;
            runs += plan_runs;
          }
      }
  std::printf("plan and check agree on %zu (build, GPU, driver) triples, %zu of them runnable\n", pairs, runs);
  EXPECT_GT(pairs, 1000u);
  EXPECT_GT(runs, 0u);
  EXPECT_LT(runs, pairs);
}

// The README's example, both ways: torch 1.13 and 2.0 cu117 run on sm_89 through their
// sm_86 cubins, on the laptop GPU of the source article with driver 535.
TEST(PlanAgreesWithCheck, Cu117BuildsRunOnAdaThroughSm86) {
  const auto& kb = kb::builtin();
  const auto* laptop = kb.find_gpus("RTX 4060 Laptop GPU").front();
  for (const auto* release : {"1.13", "2.0"}) {
    const auto* fw = kb.framework("torch");
    for (const auto& r : fw->releases)
      for (const auto& v : r.variants)
        if (r.version == release && v.cuda.str() == "11.7") {
          const auto rep = report::build(
              machine(testing::h200_snapshot(), kb, *laptop, *Version::parse("535.104.05"), *fw, r, v), kb);
          EXPECT_TRUE(rep.verdict.healthy) << release << ": " << rep.verdict.summary;
          const auto* found = testing::find_finding(rep.findings, "framework-found");
          ASSERT_NE(found, nullptr);
          EXPECT_EQ(found->title, fmt::format("PyTorch {} (/opt/venv/bin/python3): CUDA 11.7 build", release));
        }
  }
}

}  // namespace
}  // namespace cudoctor::rules
