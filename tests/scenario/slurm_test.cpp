// Slurm and NHC (issue 17): a real single-node cluster on localhost (munged, slurmctld and
// slurmd from Debian's slurm-wlm, started by tests/slurm/local-cluster.sh) whose slurmd runs
// deploy/slurm/cudoctor-healthcheck as its HealthCheckProgram: it drains the node when the
// check is pointed at a broken fixture root and resumes it when at a healthy one. Then the
// srun recipe, and the NHC check function under NHC's own calling convention.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fixture_root.hpp"
#include "machines.hpp"
#include "run_cli.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

std::string source_dir() {
  return fs::path(CUDOCTOR_DATA_DIR).parent_path().string();
}

bool have_slurm() {
  return ::geteuid() == 0 && fs::exists("/usr/sbin/slurmd") && fs::exists("/usr/sbin/slurmctld") &&
         fs::exists("/usr/sbin/munged");
}

#define REQUIRE_SLURM() \
  if (!have_slurm()) GTEST_SKIP() << "needs root and slurm-wlm + munge (scripts/install-deps.sh --test installs them)"

// A cluster of its own for one test; stopped when the test ends.
class Cluster {
 public:
  explicit Cluster(const std::string& health_check = "") {
    m_dir = fs::path(::testing::TempDir()) / ("slurm-" + std::to_string(::getpid()) + "-" + std::to_string(++s_count));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    const auto env =
        health_check.empty() ? std::string() : "HEALTH_CHECK_PROGRAM='" + health_check + "' HEALTH_CHECK_INTERVAL=2 ";
    m_node = shell_output(env + source_dir() + "/tests/slurm/local-cluster.sh start '" + m_dir.string() + "' 2>&1");
    if (!m_node.empty() && m_node.back() == '\n') m_node.pop_back();
  }
  ~Cluster() { shell_output(source_dir() + "/tests/slurm/local-cluster.sh stop '" + m_dir.string() + "'"); }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const fs::path& dir() const { return m_dir; }
  const std::string& node() const { return m_node; }
  // A command line run with this cluster's slurm.conf.
  std::string run(const std::string& command) const {
    return shell_output("SLURM_CONF='" + (m_dir / "slurm.conf").string() + "' " + command + " 2>&1");
  }
  // "drained|cudoctor: …": the node's state and drain reason as sinfo prints them.
  std::string state() const {
    auto s = run("sinfo --noheader --nodes=" + m_node + " --format='%T|%E'");
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }
  // Waits (up to 60 s: slurmd runs the health check every 2 s) for the state to be want.
  std::string wait_for(const std::string& want) const {
    std::string now;
    for (int i = 0; i < 240; ++i) {
      now = state();
      if (now == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return now;
  }

 private:
  static inline int s_count = 0;
  fs::path m_dir;
  std::string m_node;
};

void write_file(const fs::path& p, const std::string& text,
                fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  std::ofstream(p) << text;
  fs::permissions(p, perms);
}

TEST(Slurm, SlurmdsHealthCheckDrainsABrokenNodeWithTheBreakAndResumesItWhenHealthy) {
  REQUIRE_SLURM();
  REQUIRE_DEVICE_NODES();
  FixtureRoot broken;
  build_secure_boot_blocks_dkms(broken);
  FixtureRoot healthy;
  build_rtx4060_laptop(healthy);
  ASSERT_TRUE(add_device_nodes(healthy, 1));
  const auto dir = fs::path(::testing::TempDir()) / ("healthcheck-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto conf = dir / "cudoctor-healthcheck.conf";
  const auto point_at = [&](const FixtureRoot& root) {
    write_file(conf, "CUDOCTOR=" + cudoctor_binary() + "\nCUDOCTOR_ARGS=\"--root " + root.path().string() + "\"\n");
  };
  point_at(broken);
  // slurmd runs the program with an environment of its own: a wrapper names the files.
  const auto wrapper = dir / "healthcheck";
  const auto log = dir / "healthcheck.log";
  write_file(wrapper,
             "#!/bin/bash\nexport SLURM_CONF=" + (dir / "cluster" / "slurm.conf").string() +
                 "\nexport CUDOCTOR_HEALTHCHECK_CONF=" + conf.string() + "\nexec " + source_dir() +
                 "/deploy/slurm/cudoctor-healthcheck >> " + log.string() + " 2>&1\n",
             fs::perms::owner_all);
  Cluster c(wrapper.string());
  ASSERT_FALSE(c.node().empty());
  ASSERT_EQ(c.node().find(' '), std::string::npos) << c.node();
  // The wrapper's SLURM_CONF must be the cluster's: link the cluster's directory there.
  fs::create_directory_symlink(c.dir(), dir / "cluster");

  EXPECT_EQ(c.wait_for("drained|cudoctor: Secure Boot is on and the nvidia module is not loaded"),
            "drained|cudoctor: Secure Boot is on and the nvidia module is not loaded")
      << shell_output("cat " + log.string());
  point_at(healthy);
  EXPECT_EQ(c.wait_for("idle|none"), "idle|none") << shell_output("cat " + log.string());
  EXPECT_TRUE(contains(shell_output("cat " + log.string()), c.node() + " resumed: ok: the GPU stack works"));

  // An administrator's drain is theirs: neither a broken check nor a healthy one touches it.
  c.run("scontrol update NodeName=" + c.node() + " State=DRAIN Reason='maintenance: PSU swap'");
  point_at(broken);
  const auto runs = [&] { return shell_output("grep -c 'left as the administrator set it' " + log.string()); };
  for (int i = 0; i < 240 && runs() == "0\n"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(c.state(), "drained|maintenance: PSU swap");
  point_at(healthy);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  EXPECT_EQ(c.state(), "drained|maintenance: PSU swap");
}

// While a job runs on the node its GPUs are the job's: the health check asks NVML alone
// (--passive); on an idle node it runs the whole check. What the script ran is recorded by a
// stand-in for cudoctor that answers as a healthy one does.
TEST(Slurm, TheHealthCheckIsPassiveWhileAJobRunsOnTheNode) {
  REQUIRE_SLURM();
  Cluster c;
  ASSERT_FALSE(c.node().empty());
  const auto args = c.dir() / "cudoctor-args";
  const auto recorder = c.dir() / "cudoctor";
  write_file(recorder, "#!/bin/sh\necho \"$*\" >> " + args.string() + "\necho 'ok: the GPU stack works'\n",
             fs::perms::owner_all);
  const auto conf = c.dir() / "healthcheck.conf";
  write_file(conf, "CUDOCTOR=" + recorder.string() + "\n");
  const auto check = [&] {
    fs::remove(args);
    c.run("SLURMD_NODENAME=" + c.node() + " CUDOCTOR_HEALTHCHECK_CONF=" + conf.string() + " " + source_dir() +
          "/deploy/slurm/cudoctor-healthcheck");
    std::ifstream in(args);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(check(), "check --format npd --timeout 10\n") << "idle: the whole check";
  const auto job = c.run("sbatch --parsable --wrap 'sleep 120'");
  std::string running;
  for (int i = 0; i < 240 && running.empty(); ++i) {
    running = c.run("squeue --noheader --states=RUNNING --format=%i");
    if (running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_FALSE(running.empty()) << job;
  EXPECT_EQ(check(), "check --format npd --passive --timeout 10\n") << "job " << running;
  c.run("scancel " + running);
}

TEST(Slurm, TheSrunRecipeGathersEveryNodesReportAndFleetNamesTheBrokenOne) {
  REQUIRE_SLURM();
  FixtureRoot broken;
  build_secure_boot_blocks_dkms(broken);
  Cluster c;
  ASSERT_FALSE(c.node().empty());
  const auto reports = c.dir() / "reports";
  const auto out = c.run("CUDOCTOR=" + cudoctor_binary() + " timeout 120 salloc --nodes=1 --immediate=60 " +
                         source_dir() + "/deploy/slurm/cudoctor-fleet " + reports.string() + " -- --root " +
                         broken.path().string() + "; echo rc=$?");
  EXPECT_TRUE(contains(out, "1 report: 0 healthy, 1 broken")) << out;
  EXPECT_TRUE(contains(out, "✗ gpu-box L1 module-blocked-by-secure-boot: Secure Boot is on")) << out;
  EXPECT_TRUE(contains(out, "[1] 1 node (1 broken): 1 GPU — gpu-box")) << out;
  EXPECT_TRUE(out.ends_with("rc=1\n")) << out;
  // srun wrote the report under the node's name, and it is the report check --json writes.
  std::ifstream in(reports / (c.node() + ".json"));
  ASSERT_TRUE(in) << c.node();
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["verdict"]["break_finding"], "module-blocked-by-secure-boot");

  // A node that leaves no report is named, and an earlier run's report does not stand in for it.
  const auto none = c.run("CUDOCTOR=/bin/true timeout 120 salloc --nodes=1 --immediate=60 " + source_dir() +
                          "/deploy/slurm/cudoctor-fleet " + reports.string() + " 2>&1; echo rc=$?");
  EXPECT_TRUE(contains(none, "cudoctor-fleet: no report from 1 of 1 nodes: " + c.node() + "\n")) << none;
  EXPECT_TRUE(none.ends_with("rc=2\n")) << none;

  // Outside an allocation it says how to get one.
  const auto outside = shell_output(source_dir() + "/deploy/slurm/cudoctor-fleet 2>&1; echo rc=$?");
  EXPECT_TRUE(contains(outside, "run inside an allocation: salloc -N <nodes>")) << outside;
  EXPECT_TRUE(outside.ends_with("rc=2\n")) << outside;
}

// NHC is not in Debian: its calling convention is. A check is a bash function that calls
// `die 1 "message"`, after which NHC prints "ERROR: nhc: Health check failed: message" and
// its node-mark-offline helper drains the node with that note (mej/nhc README, nhc).
TEST(Nhc, CheckCudoctorDiesWithTheBreakAndPassesWhenHealthy) {
  FixtureRoot broken;
  build_secure_boot_blocks_dkms(broken);
  const auto nhc = [&](const std::string& args) {
    return shell_output(
        "bash -c 'die() { echo \"ERROR: nhc: Health check failed: $2\"; return $1; }; CUDOCTOR=" + cudoctor_binary() +
        "; . " + source_dir() + "/deploy/nhc/cudoctor.nhc; check_cudoctor " + args + "; echo rc=$?' 2>&1");
  };
  EXPECT_EQ(nhc("-t 30 -- --root " + broken.path().string()),
            "ERROR: nhc: Health check failed: cudoctor: Secure Boot is on and the nvidia module is not loaded\nrc=1\n");
  EXPECT_EQ(nhc("-- --root " + broken.path().string() + "/missing"),
            "ERROR: nhc: Health check failed: cudoctor: could not check the GPU stack (exit 2)\nrc=1\n");
  EXPECT_EQ(nhc("-x"), "ERROR: nhc: Health check failed: check_cudoctor: unknown option -x\nrc=1\n");
}

}  // namespace
}  // namespace cudoctor::testing
