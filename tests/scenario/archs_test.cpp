// `cudoctor archs` against the -gencode sets of fatbins built here with CUDA 13's nvcc, and
// against NVIDIA's cuobjdump (CUDA 11.8, from Debian) on NVIDIA's own cuBLAS 11.8.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "fixture_root.hpp"
#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;
constexpr const char* k_nvcc = "/usr/local/cuda-13.0/bin/nvcc";

nlohmann::json archs(const std::vector<std::string>& args, int expect_rc = 0) {
  auto full = std::vector<std::string>{"archs", "--json"};
  full.insert(full.end(), args.begin(), args.end());
  const auto r = run_cudoctor(full);
  EXPECT_EQ(r.exit_code, expect_rc) << r.err;
  return nlohmann::json::parse(r.out);
}

std::vector<std::string> strings(const nlohmann::json& j) {
  return j.get<std::vector<std::string>>();
}

class RealNvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(k_nvcc)) GTEST_SKIP() << "no CUDA 13.0 nvcc at " << k_nvcc;
    std::ofstream(m_root.path() / "k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n"
                                             "extern \"C\" void launch(float* x) { k<<<1, 32>>>(x); }\n";
  }
  std::string build(const std::string& name, const std::string& gencode) {
    const auto out = (m_root.path() / name).string();
    const auto cmd = std::string(k_nvcc) + " -shared -Xcompiler -fPIC -o '" + out + "' '" +
                     (m_root.path() / "k.cu").string() + "' " + gencode + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
  }
  FixtureRoot m_root;
};

TEST_F(RealNvcc, GencodeSetsAreReadBack) {
  const auto a = build("liba.so",
                       "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_90a,code=sm_90a "
                       "-gencode arch=compute_90,code=compute_90 -gencode arch=compute_120,code=sm_120");
  const auto j = archs({a})[0];
  EXPECT_EQ(strings(j["sm"]), (std::vector<std::string>{"sm_75", "sm_90a", "sm_120"}));
  EXPECT_EQ(strings(j["ptx"]), (std::vector<std::string>{"compute_90"}));
  // Family-specific and arch-specific targets, all compressed.
  const auto b = build("libb.so",
                       "-gencode arch=compute_100f,code=sm_100f -gencode arch=compute_120a,code=sm_120a "
                       "-gencode arch=compute_80,code=compute_80 -Xfatbin -compress-all");
  const auto k = archs({b})[0];
  EXPECT_EQ(strings(k["sm"]), (std::vector<std::string>{"sm_100f", "sm_120a"}));
  EXPECT_EQ(strings(k["ptx"]), (std::vector<std::string>{"compute_80"}));
  for (const auto& e : k["entries"]) EXPECT_TRUE(e["compressed"].get<bool>()) << e.dump();
}

TEST_F(RealNvcc, WhereEachBuildRuns) {
  const auto a = build("liba.so",
                       "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_90a,code=sm_90a "
                       "-gencode arch=compute_90,code=compute_90");
  EXPECT_EQ(archs({"--cc", "7.5", a})[0]["runs_on"]["via"], "sm_75 cubin");
  EXPECT_EQ(archs({"--cc", "9.0", a})[0]["runs_on"]["via"], "sm_90a cubin");
  EXPECT_EQ(archs({"--cc", "12.0", a})[0]["runs_on"]["via"], "compute_90 PTX (JIT)");
  // sm_75 does not run on 8.9 (another major), compute_90 PTX cannot go down to 8.9.
  const auto no = archs({"--cc", "8.9", a}, 1)[0]["runs_on"];
  EXPECT_FALSE(no["runs"].get<bool>());
  const auto text = run_cudoctor({"archs", "--cc", "8.9", a});
  EXPECT_TRUE(contains(text.out, "does not run on compute capability 8.9"));
}

// The driver loads the closest cubin: on 8.9 the real cuBLASLt's sm_89, not its sm_80.
TEST(RealCublas, ArchsNameTheCubinTheDriverPicks) {
  const std::string lt = "/usr/local/cuda-13.0/lib/libcublasLt.so.13";
  if (!fs::exists(lt)) GTEST_SKIP() << "no CUDA 13.0 toolkit at /usr/local/cuda-13.0";
  EXPECT_EQ(archs({"--cc", "8.9", lt})[0]["runs_on"]["via"], "sm_89 cubin");
  EXPECT_EQ(archs({"--cc", "8.7", lt})[0]["runs_on"]["via"], "sm_86 cubin")
      << "no sm_87 cubin: the closest older minor";
}

TEST(RealCuobjdump, CublasArchsAgree) {
  const auto root = std::string(CUDOCTOR_VENDOR_DIR) + "/cuda118";
  const auto cuobjdump = root + "/usr/bin/cuobjdump";
  const auto cublas = root + "/usr/lib/x86_64-linux-gnu/libcublas.so.11";
  if (!fs::exists(cuobjdump) || !fs::exists(cublas))
    GTEST_SKIP() << "Debian's CUDA 11.8 packages are not unpacked (scripts/install-deps.sh --test)";
  // cuobjdump names each entry "<file>.<n>.sm_XY.cubin" / ".sm_XY.ptx".
  const auto list = [&](const char* what) {
    std::set<std::string> out;
    const std::regex re(R"(\.(sm_[0-9]+[a-z]?)\.(cubin|ptx))");
    const auto text = shell_output("'" + cuobjdump + "' " + what + " '" + cublas + "' 2>/dev/null");
    for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) out.insert((*it)[1]);
    return out;
  };
  const auto cubins = list("--list-elf");
  const auto ptx = list("--list-ptx");
  ASSERT_FALSE(cubins.empty());
  const auto j = archs({cublas})[0];
  std::set<std::string> ours_sm, ours_ptx;
  for (const auto& s : strings(j["sm"])) ours_sm.insert(s);
  for (const auto& s : strings(j["ptx"])) ours_ptx.insert("sm_" + s.substr(8));  // compute_90 -> sm_90
  EXPECT_EQ(ours_sm, cubins);
  EXPECT_EQ(ours_ptx, ptx);
  // And entry by entry: cuobjdump lists one line per cubin.
  std::size_t n_cubins = 0;
  for (const auto& e : j["entries"]) n_cubins += e["kind"] == 2;
  const auto listing = shell_output("'" + cuobjdump + "' --list-elf '" + cublas + "'");
  EXPECT_EQ(n_cubins, static_cast<std::size_t>(std::count(listing.begin(), listing.end(), '\n')));
}

TEST(ScenarioArchs, HostileFatbins) {
  if (!fs::exists(k_nvcc)) GTEST_SKIP() << "no CUDA 13.0 nvcc";
  FixtureRoot r;
  std::ofstream(r.path() / "k.cu") << "__global__ void k(float* x) { x[0] = 1.0f; }\n";
  const auto lib = (r.path() / "libk.so").string();
  ASSERT_EQ(std::system((std::string(k_nvcc) + " -shared -Xcompiler -fPIC -arch=sm_90 -o '" + lib + "' '" +
                         (r.path() / "k.cu").string() + "'")
                            .c_str()),
            0);
  // Corrupt the first entry's payload size so that it runs past its container.
  std::string bytes;
  {
    std::ifstream in(lib, std::ios::binary);
    bytes.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  const auto magic = bytes.find(std::string("\x50\xed\x55\xba", 4));
  ASSERT_NE(magic, std::string::npos);
  auto broken = bytes;
  for (int i = 0; i < 8; ++i) broken[magic + 16 + 8 + static_cast<std::size_t>(i)] = '\x7f';
  std::ofstream(r.path() / "broken.so", std::ios::binary) << broken;
  const auto run = run_cudoctor({"archs", (r.path() / "broken.so").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(contains(run.err, "runs past its container")) << run.err;
  // Truncated in the middle of the fatbin.
  std::ofstream(r.path() / "short.so", std::ios::binary) << bytes.substr(0, magic + 40);
  const auto t = run_cudoctor({"archs", (r.path() / "short.so").string()});
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_EQ(t.signal, 0);
}

}  // namespace
}  // namespace cudoctor::testing
