#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/fake_sys.hpp"

namespace cudoctor::probe {

snapshot::PythonFacts python_of(const sys::FakeSys& s) {
  Context ctx(s, {});
  return probe_python(ctx, {});
}

TEST(PythonProbe, AnEnvironmentNamedTwiceIsOneEnvironment) {
  sys::FakeSys s;
  s.set_env("HOME", "/root");
  s.dir("/opt/conda/envs/ml/conda-meta");
  s.link("/opt/conda/envs/alias", "/opt/conda/envs/ml");
  s.file("/root/.conda/environments.txt", "/opt/conda/envs/ml\n/opt/conda/envs/ml\n\n/opt/conda/envs/alias\n");
  const auto py = python_of(s);
  ASSERT_EQ(py.envs.size(), 1u);
  EXPECT_EQ(py.envs[0].prefix, "/opt/conda/envs/ml");
  EXPECT_EQ(py.envs[0].kind, "conda");
  EXPECT_EQ(py.envs[0].found_by, (std::vector<std::string>{"~/.conda/environments.txt", "conda environment"}));
  EXPECT_TRUE(py.lists_cut.empty());
}

TEST(PythonProbe, LongListsAreInspectedUpToTheBound) {
  sys::FakeSys s;
  s.set_env("HOME", "/root");
  std::string list;
  for (int i = 0; i < 10003; ++i) {
    s.dir(fmt::format("/root/.pyenv/versions/v{:05}", i));
    list += fmt::format("/srv/envs/e{}\n", i);
  }
  s.dir("/srv/envs/e0/conda-meta");
  s.file("/root/.conda/environments.txt", list);
  const auto py = python_of(s);
  EXPECT_EQ(py.envs.size(), 10001u) << "10000 pyenv versions and the one conda environment that exists";
  ASSERT_EQ(py.lists_cut.size(), 2u);
  EXPECT_EQ(py.lists_cut[0], (snapshot::EnvListCut{"/root/.pyenv/versions", 10003, 10000}));
  EXPECT_EQ(py.lists_cut[1], (snapshot::EnvListCut{"/root/.conda/environments.txt", 10003, 10000}));
  EXPECT_EQ(py.envs[9999].prefix, "/root/.pyenv/versions/v09999") << "the first ones, in the list's order";
  EXPECT_EQ(py.envs.back().prefix, "/srv/envs/e0");
}

}  // namespace cudoctor::probe
