// L2 on fixture roots that hold real toolkits: CUDA 13.0 (hard links to /usr/local/cuda-13.0)
// and Debian's CUDA 11.8 nvidia-cuda-toolkit (unpacked by scripts/install-deps.sh --test).
// `cudoctor env` is eval'ed in bash, zsh and fish and the real nvcc answers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

// Both toolkits in one root, as a machine that installed CUDA 13.0 from NVIDIA and CUDA 11.8
// from Debian has them.
bool build_two_toolkits(FixtureRoot& r) {
  const fs::path cuda13 = "/usr/local/cuda-13.0";
  const fs::path debian = std::string(CUDOCTOR_VENDOR_DIR) + "/cuda118/usr";
  if (!fs::exists(cuda13 / "bin/nvcc") || !fs::exists(debian / "lib/nvidia-cuda-toolkit/bin/nvcc")) return false;
  add_debian_12(r);
  const auto copy_tree = [&](const fs::path& from, const std::string& to) {
    const auto cmd = "mkdir -p '" + r.host(to).parent_path().string() + "' && cp -al '" + from.string() + "' '" +
                     r.host(to).string() + "' 2>/dev/null || cp -a '" + from.string() + "' '" + r.host(to).string() +
                     "'";
    return std::system(cmd.c_str()) == 0;
  };
  if (!copy_tree(cuda13, "/usr/local/cuda-13.0")) return false;
  r.link("/usr/local/cuda", "/usr/local/cuda-13.0");
  if (!copy_tree(debian / "lib/nvidia-cuda-toolkit", "/usr/lib/nvidia-cuda-toolkit")) return false;
  for (const auto& e : fs::directory_iterator(debian / "lib/x86_64-linux-gnu"))
    if (e.path().filename().string().starts_with("libcu")) {
      if (fs::is_symlink(e.path()))
        r.link("/usr/lib/x86_64-linux-gnu/" + e.path().filename().string(), fs::read_symlink(e.path()).string());
      else
        r.copy("/usr/lib/x86_64-linux-gnu/" + e.path().filename().string(), e.path());
    }
  r.copy("/usr/bin/nvcc", debian / "bin/nvcc");
  return true;
}

#define REQUIRE_TOOLKITS(r)   \
  if (!build_two_toolkits(r)) \
  GTEST_SKIP() << "needs /usr/local/cuda-13.0 and Debian's CUDA 11.8 (scripts/install-deps.sh --test)"

TEST(RealToolkits, FindsBothWithVersionsAndComponents) {
  FixtureRoot r;
  REQUIRE_TOOLKITS(r);
  const auto run = run_cudoctor({"--root", r.path().string(), "toolkits", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto f = nlohmann::json::parse(run.out);
  ASSERT_EQ(f["toolkits"].size(), 2u) << f.dump(1);
  const auto& t13 = f["toolkits"][0];
  const auto& t118 = f["toolkits"][1];
  EXPECT_EQ(t13["root"], "/usr/local/cuda-13.0");
  EXPECT_EQ(t13["version"], "13.0.88") << "nvcc's own answer";
  EXPECT_EQ(t118["root"], "/usr/lib/nvidia-cuda-toolkit");
  EXPECT_EQ(t118["layout"], "debian");
  EXPECT_EQ(t118["version"], "11.8.89");
  std::map<std::string, std::string> c13, c118;
  for (const auto& c : t13["components"]) c13[c["name"]] = c["version"];
  for (const auto& c : t118["components"]) c118[c["name"]] = c["version"];
  EXPECT_EQ(c13["cudart"], "13.0.96");
  EXPECT_EQ(c13["cublas"], "13.1.0.3");
  EXPECT_EQ(c118["cudart"], "11.8.89");
  EXPECT_EQ(c118["cublas"], "11.11.3.6");
  // The versions come from the files (nvcc's embedded banner), never from running nvcc.
  bool from_nvcc = false;
  for (const auto& w : t13["witnesses"])
    from_nvcc = from_nvcc || (w["source"] == "nvcc binary" && w["version"] == "13.0.88");
  EXPECT_TRUE(from_nvcc) << t13["witnesses"].dump();
  // What each compiles for: CUDA 11.8 reaches sm_90 (Hopper), not sm_100; 13.0 drops sm_70.
  const auto text = run_cudoctor({"--root", r.path().string(), "toolkits"}).out;
  const auto at118 = text.find("CUDA 11.8.89");
  ASSERT_NE(at118, std::string::npos) << text;
  const auto line118 = text.substr(text.find("compiles for:", at118), 200);
  EXPECT_TRUE(contains(line118.substr(0, line118.find('\n')), "sm_90")) << line118;
  EXPECT_FALSE(contains(line118.substr(0, line118.find('\n')), "sm_100")) << line118;
}

TEST(RealToolkits, EnvSwitchesInBashZshAndFish) {
  FixtureRoot r;
  REQUIRE_TOOLKITS(r);
  const auto bin = cudoctor_binary();
  const auto root = r.path().string();
  for (const std::string shell : {"bash", "zsh", "fish"}) {
    if (!fs::exists("/usr/bin/" + shell)) {
      ADD_FAILURE() << shell << " is not installed (scripts/install-deps.sh --test installs it)";
      continue;
    }
    // Start from a PATH that already has CUDA 13.0 on it, as /etc/profile.d/cuda.sh puts it.
    const auto start = "PATH=" + root + "/usr/local/cuda/bin:/usr/bin:/bin";
    const std::string eval = shell == "fish"
                                 ? "eval (" + bin + " --root " + root + " env {} --shell fish | string collect)"
                                 : "eval \"$(" + bin + " --root " + root + " env {} --shell " + shell + ")\"";
    const auto at = [&](const std::string& v) {
      auto e = eval;
      e.replace(e.find("{}"), 2, v);
      return e;
    };
    const auto script = at("11.8") + "; nvcc --version | tail -2 | head -1; echo CUDA_HOME=$CUDA_HOME; " + at("13.0") +
                        "; nvcc --version | tail -2 | head -1; echo CUDA_HOME=$CUDA_HOME";
    const auto out =
        shell_output("env -i " + start + " HOME=/nonexistent /usr/bin/" + shell + " -c '" + script + "' 2>&1");
    EXPECT_NE(
        out.find("Cuda compilation tools, release 11.8, V11.8.89\nCUDA_HOME=" + root + "/usr/lib/nvidia-cuda-toolkit"),
        std::string::npos)
        << shell << ":\n"
        << out;
    EXPECT_NE(out.find("Cuda compilation tools, release 13.0, V13.0.88\nCUDA_HOME=" + root + "/usr/local/cuda-13.0"),
              std::string::npos)
        << shell << ":\n"
        << out;
  }
}

TEST(RealToolkits, EnvKeepsEverythingElseAndUnsets) {
  FixtureRoot r;
  REQUIRE_TOOLKITS(r);
  const auto root = r.path().string();
  const auto run = run_cudoctor({"--root", root, "env", "11.8"},
                                {{"PATH", root + "/usr/local/cuda/bin:/opt/tool/bin:/usr/bin:/opt/tool/bin"},
                                 {"LD_LIBRARY_PATH", root + "/usr/local/cuda-13.0/lib64:/opt/tool/lib"}});
  EXPECT_TRUE(contains(
      run.out, "export PATH='" + root + "/usr/lib/nvidia-cuda-toolkit/bin:/opt/tool/bin:/usr/bin:/opt/tool/bin'"))
      << run.out;
  EXPECT_TRUE(contains(run.out, "export LD_LIBRARY_PATH='/opt/tool/lib'")) << run.out;
  const auto unset =
      run_cudoctor({"--root", root, "env", "--unset"}, {{"PATH", root + "/usr/local/cuda-13.0/bin:/usr/bin"}});
  EXPECT_TRUE(contains(unset.out, "export PATH='/usr/bin'"));
  EXPECT_TRUE(contains(unset.out, "unset CUDA_HOME"));
  const auto none = run_cudoctor({"--root", root, "env", "10.2"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.err, "no toolkit matches '10.2'"));
}

TEST(RealToolkits, WriteForDirenv) {
  FixtureRoot r;
  REQUIRE_TOOLKITS(r);
  const auto root = r.path().string();
  const auto envrc = (r.path() / ".envrc").string();
  ASSERT_EQ(run_cudoctor({"--root", root, "env", "11.8", "--write", envrc}).exit_code, 0);
  const auto out = shell_output("env -i PATH=" + root + "/usr/local/cuda/bin:/usr/bin:/bin bash -c '. " + envrc +
                                "; echo $PATH; nvcc --version | tail -2 | head -1'");
  EXPECT_TRUE(contains(out, root + "/usr/lib/nvidia-cuda-toolkit/bin:/usr/bin:/bin\n")) << out;
  EXPECT_TRUE(contains(out, "release 11.8")) << out;
}

TEST(ScenarioToolkitRules, StubsCudaHomeLinkAndGlobalSettings) {
  FixtureRoot r;
  REQUIRE_TOOLKITS(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  r.file("/etc/profile.d/cuda.sh", "# added by the installer\nexport PATH=/usr/local/cuda/bin:$PATH\n");
  const auto c = check_root(r, {"--no-runtime"},
                            {{"PATH", "/usr/bin:/bin"},
                             {"CUDA_HOME", "/usr/local/cuda-13.0"},
                             {"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64/stubs"}});
  // The toolkit's stubs directory holds only libcuda.so: libcuda.so.1 does not resolve there.
  const auto stubs = c.finding("stubs-dir-on-loader-path");
  ASSERT_FALSE(stubs.is_null()) << c.ids();
  EXPECT_EQ(stubs["layer"], "L2");
  EXPECT_EQ(stubs["severity"], "warn");
  EXPECT_FALSE(c.has("stubs-on-loader-path")) << c.ids();
  const auto newer = c.finding("toolkit-newer-than-driver");
  ASSERT_FALSE(newer.is_null()) << c.ids();
  EXPECT_EQ(newer["title"], "CUDA 13.0 at /usr/local/cuda-13.0 needs driver ≥ 580.65.06; this driver is 535.104.05");
  EXPECT_TRUE(c.has("cuda-home-not-path-nvcc")) << "nvcc on PATH is Debian's 11.8: " << c.ids();
  EXPECT_TRUE(contains(joined_evidence(c.finding("cuda-paths-set-globally")), "/etc/profile.d/cuda.sh:2:"));
  // A removed toolkit's link left behind.
  r.link("/usr/local/cuda", "/usr/local/cuda-12.4");
  const auto d = check_root(r, {"--no-runtime"}, {{"PATH", "/usr/bin:/bin"}});
  EXPECT_EQ(d.finding("cuda-link-dangling")["title"],
            "/usr/local/cuda points to /usr/local/cuda-12.4, which does not exist");
}

// nvcc's version is read from its bytes a window at a time, each window given back when
// searched: a banner across the edge of the second window, past a first window already
// given back, is still read whole. This nvcc has no ELF header, so the whole file is searched.
TEST(ScenarioToolkitRules, NvccBannerAcrossAWindowEdge) {
  FixtureRoot r;
  add_debian_12(r, "6.1.0-18-amd64", "gpu-node");
  const std::string banner = "Cuda compilation tools, release 12.6, V12.6.85\nBuild cuda_12.6";
  std::string bytes((2u << 20) - 10, 'C');  // every byte the banner's first letter
  bytes += banner + std::string(4096, '\0');
  r.file("/usr/local/cuda-12.6/bin/nvcc", bytes);
  const auto c = check_root(r, {"--no-runtime"}, {{"PATH", "/usr/local/cuda-12.6/bin:/usr/bin:/bin"}});
  ASSERT_EQ(c.report["toolkits"].size(), 1u) << c.report["toolkits"].dump();
  const auto& t = c.report["toolkits"][0];
  EXPECT_EQ(t["root"], "/usr/local/cuda-12.6");
  EXPECT_EQ(t["version"], "12.6.85");
  ASSERT_FALSE(t["witnesses"].empty());
  EXPECT_EQ(t["witnesses"][0]["source"], "nvcc binary");
  EXPECT_EQ(t["witnesses"][0]["version"], "12.6.85");
}

TEST(ScenarioToolkitRules, ThisMachinesToolkit) {
  if (!fs::exists("/usr/local/cuda-13.0/bin/nvcc")) GTEST_SKIP() << "no /usr/local/cuda-13.0";
  const auto run = run_cudoctor({"toolkits", "--json"});
  const auto f = nlohmann::json::parse(run.out);
  bool found = false;
  for (const auto& t : f["toolkits"])
    found = found || (t["root"] == "/usr/local/cuda-13.0" && t["version"] == "13.0.88");
  EXPECT_TRUE(found) << run.out;
}

}  // namespace
}  // namespace cudoctor::testing
