#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

namespace cudoctor::probe {

using snapshot::ToolkitFinder;
using snapshot::ToolkitFoundBy;

TEST(ToolkitProbe, HowEachToolkitWasFound) {
  sys::FakeSys s;
  s.file("/usr/local/cuda-12.4/bin/nvcc",
         "\x7f"
         "ELF",
         0755)
      .file("/usr/local/cuda-12.4/version.json", "{}");
  s.link("/usr/local/cuda", "cuda-12.4");
  s.file("/opt/conda/envs/cu/conda-meta/cuda-toolkit-12.1.0-0.json", "{}");
  s.set_env("PATH", "/usr/local/cuda/bin:/usr/bin").set_env("CUDA_HOME", "/usr/local/cuda-12.4");
  Context ctx(s, {});
  const auto f = probe_toolkits(ctx);
  ASSERT_EQ(f.toolkits.size(), 2u);
  const auto& local = f.toolkits[0].root == "/usr/local/cuda-12.4" ? f.toolkits[0] : f.toolkits[1];
  const auto& conda = &local == &f.toolkits[0] ? f.toolkits[1] : f.toolkits[0];
  EXPECT_EQ(local.found_by, (std::vector<ToolkitFoundBy>{{ToolkitFinder::usr_local_dir, ""},
                                                         {ToolkitFinder::usr_local_cuda, ""},
                                                         {ToolkitFinder::cuda_home, ""},
                                                         {ToolkitFinder::nvcc_on_path, ""}}));
  EXPECT_EQ(conda.found_by, (std::vector<ToolkitFoundBy>{{ToolkitFinder::conda_environment, "/opt/conda/envs/cu"}}));
  EXPECT_EQ(snapshot::to_string(conda.found_by[0]), "conda environment /opt/conda/envs/cu");
}

TEST(ToolkitProbe, UnreadableSourcesAreRecorded) {
  sys::FakeSys s;
  s.dir("/etc/profile.d").fail("/etc/profile.d", "Permission denied");
  s.file("/etc/environment", "PATH=/usr/local/cuda/bin\n").fail("/etc/environment", "Permission denied");
  s.dir("/usr/local").fail("/usr/local", "Input/output error");
  Context ctx(s, {});
  const auto f = probe_toolkits(ctx);
  EXPECT_TRUE(f.global_settings.empty());
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/usr/local", "Input/output error"}));
  EXPECT_EQ(u[1], (snapshot::Unreadable{"/etc/profile.d", "Permission denied"}));
  EXPECT_EQ(u[2], (snapshot::Unreadable{"/etc/environment", "Permission denied"}));
}

}  // namespace cudoctor::probe
