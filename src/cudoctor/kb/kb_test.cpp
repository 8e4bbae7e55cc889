#include "cudoctor/kb/kb.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "cudoctor/kb/embedded.hpp"

namespace cudoctor::kb {
namespace {

util::Version v(const char* s) {
  return *util::Version::parse(s);
}

// The embedded files with one replaced.
std::vector<std::pair<std::string, std::string>> files_with(const std::string& name, const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : embedded_files())
    out.emplace_back(std::string(f.name), f.name == name ? text : std::string(f.text));
  return out;
}

TEST(Kb, EmbeddedDataLoadsAndIsConsistent) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  const auto problems = kb->problems();
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_GE(kb->nvml_return_codes().size(), 30u);
  EXPECT_GE(kb->toolkit_releases().size(), 50u);
  EXPECT_GE(kb->gpus().size(), 80u);
  EXPECT_EQ(kb->nvml_return_code(9)->name, "NVML_ERROR_DRIVER_NOT_LOADED");
  EXPECT_EQ(kb->nvml_return_code(18)->name, "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
  EXPECT_EQ(kb->cuda_error("runtime", 35)->name, "cudaErrorInsufficientDriver");
  EXPECT_EQ(kb->cuda_error("driver", 34)->name, "CUDA_ERROR_STUB_LIBRARY");
}

TEST(Kb, EveryRecordHasASourceAndWellFormedValues) {
  const auto no_source = KnowledgeBase::load(files_with(
      "gpus.json", R"({"records": [{"pci_id": "0x2330", "name": "GH100", "architecture": "Hopper", "cc": "9.0"}]})"));
  ASSERT_FALSE(no_source);
  EXPECT_EQ(no_source.error(), "gpus.json record 0: no \"source\"");
  const auto bad_version = KnowledgeBase::load(
      files_with("driver_branches.json",
                 R"({"records": [{"branch": 535, "max_cuda": "12.x", "source": "https://example.org/"}]})"));
  ASSERT_FALSE(bad_version);
  EXPECT_EQ(bad_version.error(), "driver_branches.json record 0: \"max_cuda\" is not a version: '12.x'");
  const auto bad_id = KnowledgeBase::load(files_with(
      "gpus.json",
      R"({"records": [{"pci_id": "0xZZ", "name": "x", "architecture": "Hopper", "cc": "9.0", "source": "https://a/"}]})"));
  ASSERT_FALSE(bad_id);
  EXPECT_NE(bad_id.error().find("pci_id"), std::string::npos);
  EXPECT_FALSE(KnowledgeBase::load(files_with("frameworks.json", "{")));
  const auto http = KnowledgeBase::load(files_with(
      "driver_branches.json", R"({"records": [{"branch": 535, "max_cuda": "12.2", "source": "http://insecure/"}]})"));
  EXPECT_FALSE(http);
}

TEST(Kb, ConsistencyProblemsAreNamed) {
  auto kb = KnowledgeBase::load(files_with("gpus.json",
                                           R"({"brands": [{"brand": "datacenter", "source": "https://a/"}],
          "records": [{"pci_id": "0x2330", "name": "a", "architecture": "Hopper", "cc": "9.0", "brand": "datacenter", "source": "https://a/"},
                      {"pci_id": "0x2330", "name": "b", "architecture": "Hopper", "cc": "9.0", "brand": "datacenter", "source": "https://a/"}]})"));
  ASSERT_TRUE(kb) << kb.error();
  const auto p = kb->problems();
  ASSERT_FALSE(p.empty());
  EXPECT_NE(p.front().find("listed twice"), std::string::npos);
}

TEST(Kb, EveryGpuHasABrandOfTheBrandsTable) {
  const auto unlisted = KnowledgeBase::load(files_with(
      "gpus.json",
      R"({"brands": [{"brand": "geforce", "words": ["GeForce"], "forward_compat": false, "source": "https://a/"}],
          "records": [{"pci_id": "0x2330", "name": "a", "architecture": "Hopper", "cc": "9.0", "brand": "tesla", "source": "https://a/"}]})"));
  ASSERT_FALSE(unlisted);
  EXPECT_NE(unlisted.error().find("brand 'tesla' is not one of the brands"), std::string::npos) << unlisted.error();
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  for (const auto& g : kb->gpus()) EXPECT_FALSE(g.brand.empty()) << g.name << ": the shipped data names every brand";
}

TEST(Kb, BrandsDecideForwardCompatibility) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  // A listed GeForce (the RTX 4090), a listed data-center GPU (the H100), and one not listed
  // whose name holds the word.
  const auto* rtx = kb->brand_of(0x2684, "NVIDIA GeForce RTX 4090");
  ASSERT_NE(rtx, nullptr);
  EXPECT_EQ(rtx->brand, "geforce");
  EXPECT_EQ(rtx->forward_compat, false);
  const auto* h100 = kb->brand_of(0x2330, "NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->forward_compat, true);
  const auto* titan = kb->brand_of(0x1d81, "GV100 [TITAN V]");
  ASSERT_NE(titan, nullptr);
  EXPECT_EQ(titan->brand, "titan");
  const auto* a6000 = kb->brand_of(0x2230, "NVIDIA RTX A6000");
  ASSERT_NE(a6000, nullptr);
  EXPECT_FALSE(a6000->forward_compat.has_value()) << "only some workstation boards: not known";
  EXPECT_EQ(kb->brand_of(0x1234, "Some Future Board"), nullptr);
}

TEST(Kb, PcieGenerationsByNumberAndBySysfsRate) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  ASSERT_EQ(kb->pcie_generations().size(), 6u);
  const auto* g4 = kb->pcie_generation_at("16.0 GT/s PCIe");
  ASSERT_NE(g4, nullptr);
  EXPECT_EQ(g4->generation, 4);
  EXPECT_DOUBLE_EQ(g4->lane_gb_per_s * 16, 31.504);
  EXPECT_EQ(kb->pcie_generation(1)->gt_per_s, 2.5);
  EXPECT_EQ(kb->pcie_generation_at("Unknown"), nullptr);
  EXPECT_EQ(kb->pcie_generation(7), nullptr);
}

TEST(Kb, RuntimeLibrariesAndTheirComponents) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  const auto* cupti = kb->runtime_library("libcupti.so.12");
  ASSERT_NE(cupti, nullptr);
  EXPECT_NE(cupti->needed_for.find("profiling"), std::string::npos);
  const auto* cudnn = kb->runtime_library("libcudnn.so.8");  // TensorFlow's "libcudnn.so.{cudnn}"
  ASSERT_NE(cudnn, nullptr);
  EXPECT_TRUE(cudnn->needed_for.empty());
  EXPECT_EQ(kb->runtime_library("libcudnn.so.x"), nullptr);
  EXPECT_EQ(kb->component_of("libcublasLt.so.12")->name, "cuBLASLt");
  EXPECT_EQ(kb->component_of("libcublas.so.12")->name, "cuBLAS");
  EXPECT_EQ(kb->component_of("libcudnn_cnn_infer.so.8")->wheel, "nvidia-cudnn-cu");
  EXPECT_EQ(kb->component_of("libcuda.so.1"), nullptr) << "the driver is no wheel's";
}

// frameworks.json with one torch release whose "python" member is the given JSON (none: no member).
std::string one_torch_release(const std::string& python) {
  return R"({"frameworks": [{"name": "torch", "display": "PyTorch", "releases": [{"version": "2.4", )" +
         (python.empty() ? std::string() : "\"python\": " + python + ", ") +
         R"("variants": [{"cuda": "12.4", "install": "pip"}], "source": "https://a/"}]}]})";
}

TEST(Kb, PythonVersionsAreCheckedOnLoad) {
  const auto absent = KnowledgeBase::load(files_with("frameworks.json", one_torch_release("")));
  ASSERT_TRUE(absent) << absent.error();
  EXPECT_TRUE(absent->framework("torch")->releases.front().python.empty());
  const auto good = KnowledgeBase::load(files_with("frameworks.json", one_torch_release(R"(["3.9", "3.10"])")));
  ASSERT_TRUE(good) << good.error();
  EXPECT_EQ(good->framework("torch")->releases.front().python, (std::vector<std::string>{"3.9", "3.10"}));
  const auto bare = KnowledgeBase::load(files_with("frameworks.json", one_torch_release(R"(["3.9", "3"])")));
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.error(),
            "frameworks.json torch release record 0: \"python\" entry is not a CPython minor version \"3.N\": '3'");
  const auto word = KnowledgeBase::load(files_with("frameworks.json", one_torch_release(R"(["three"])")));
  ASSERT_FALSE(word);
  EXPECT_EQ(word.error(),
            "frameworks.json torch release record 0: \"python\" entry is not a CPython minor version \"3.N\": 'three'");
  for (const char* bad :
       {R"(["3.10", "3.9"])", R"(["3.9", "3.9"])", R"(["3.09"])", R"(["2.7"])", R"([3.9])", "[]", R"("3.9")"}) {
    const auto r = KnowledgeBase::load(files_with("frameworks.json", one_torch_release(bad)));
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(r.error().starts_with("frameworks.json torch release record 0: \"python\"")) << r.error();
  }
}

TEST(KbQueries, PythonSupport) {
  const auto& kb = builtin();
  const auto release = [&](const char* framework, const char* version) -> const FrameworkRelease& {
    for (const auto& r : kb.framework(framework)->releases)
      if (r.version == version) return r;
    throw std::logic_error(std::string("no release ") + framework + " " + version);
  };
  EXPECT_EQ(supports_python(release("torch", "2.4"), v("3.8")), true) << "2.4 is the last with Python 3.8";
  EXPECT_EQ(supports_python(release("torch", "2.5"), v("3.8")), false);
  EXPECT_EQ(supports_python(release("torch", "2.5"), v("3.12.4")), true) << "the patch level is ignored";
  EXPECT_EQ(supports_python(release("torch", "1.13"), v("3.7")), true);
  EXPECT_EQ(supports_python(release("tensorflow", "2.21"), v("3.9")), false);
  EXPECT_EQ(supports_python(release("torch", "2.4"), v("2.7")), false);
  EXPECT_EQ(supports_python(release("jax", "cuda12"), v("3.12")), std::nullopt) << "no python list: unknown";
  EXPECT_EQ(supports_python(FrameworkRelease{}, v("3.12")), std::nullopt);
  // Every released torch and TensorFlow release has a list, and each of its entries answers yes.
  for (const auto& f : kb.frameworks())
    for (const auto& r : f.releases) {
      if ((f.name == "torch" || f.name == "tensorflow") && recommendable(r)) {
        EXPECT_FALSE(r.python.empty()) << f.name << " " << r.version;
      }
      for (const auto& py : r.python) {
        EXPECT_EQ(supports_python(r, v(py.c_str())), true) << f.name << " " << r.version;
      }
    }
}

TEST(KbQueries, DriverAgainstRuntime) {
  const auto& kb = builtin();
  EXPECT_EQ(kb.driver_fit(v("535.104.05"), v("12.2")), DriverFit::native);
  EXPECT_EQ(kb.driver_fit(v("535.54.03"), v("12.2")), DriverFit::native) << "12.2 GA needs 535.54.03";
  EXPECT_EQ(kb.driver_fit(v("535.104.05"), v("12.8")), DriverFit::minor_compat);
  EXPECT_EQ(kb.driver_fit(v("520.61.05"), v("12.1")), DriverFit::too_old);
  EXPECT_EQ(kb.driver_fit(v("535.104.05"), v("13.0")), DriverFit::too_old);
  EXPECT_EQ(kb.driver_fit(v("470.82.01"), v("11.8")), DriverFit::minor_compat);
  EXPECT_EQ(kb.max_cuda_for_driver(v("535.104.05"))->str(), "12.2");
  EXPECT_EQ(kb.max_cuda_for_driver(v("550.54.14"))->str(), "12.4");
  EXPECT_EQ(kb.max_cuda_for_driver(v("580.159.04"))->str(), "13.0");
  EXPECT_EQ(kb.min_driver_for_cuda(v("12.8"))->str(), "570.26");
  EXPECT_EQ(kb.minor_compat_floor(12)->str(), "525.60.13");
}

TEST(KbQueries, ArchitecturesAndToolkits) {
  const auto& kb = builtin();
  EXPECT_EQ(kb.architecture_of(v("12.0"))->name, "Blackwell");
  EXPECT_EQ(kb.min_driver_for_cc(v("12.0"))->str(), "570.26");
  EXPECT_EQ(kb.min_driver_for_cc(v("8.9"))->str(), "520.61.05");
  EXPECT_TRUE(kb.toolkit_targets_cc(v("12.9"), v("7.0")));
  EXPECT_FALSE(kb.toolkit_targets_cc(v("13.0"), v("7.0"))) << "CUDA 13.0 dropped Volta";
  EXPECT_FALSE(kb.toolkit_targets_cc(v("12.0"), v("3.5"))) << "CUDA 12.0 dropped Kepler";
  EXPECT_FALSE(kb.toolkit_targets_cc(v("11.7"), v("8.9"))) << "sm_89 arrived in 11.8";
  EXPECT_EQ(kb.architecture_of(v("3.5"))->last_driver_branch, 470);
  // Driver 535: too old for Blackwell, too new for Kepler.
  std::vector<std::string> not_run;
  for (const auto& cc : kb.ccs_not_run_by(v("535.104.05"))) not_run.push_back(cc.str());
  EXPECT_NE(std::find(not_run.begin(), not_run.end(), "12.0"), not_run.end());
  EXPECT_NE(std::find(not_run.begin(), not_run.end(), "3.7"), not_run.end());
  EXPECT_EQ(std::find(not_run.begin(), not_run.end(), "8.9"), not_run.end());
}

TEST(KbQueries, FindGpusByNameOrId) {
  const auto& kb = builtin();
  const auto laptop = kb.find_gpus("RTX 4060 Laptop GPU");
  ASSERT_FALSE(laptop.empty());
  EXPECT_EQ(laptop.front()->name, "AD107M [GeForce RTX 4060 Max-Q / Mobile]");
  EXPECT_EQ(kb.find_gpus("RTX 4060").front()->pci_id, 0x2882) << "the desktop card, not a laptop one";
  EXPECT_EQ(kb.find_gpus("NVIDIA GeForce RTX 5090").front()->pci_id, 0x2b85);
  EXPECT_EQ(kb.find_gpus("10de:2330").front()->name, "GH100 [H100 SXM5 80GB]");
  EXPECT_EQ(kb.find_gpus("0x2335").front()->name, "GH100 [H200 SXM 141GB]");
  EXPECT_TRUE(kb.find_gpus("Voodoo 3").empty());
}

TEST(KbQueries, KernelsOfAPublishedArchList) {
  FrameworkVariant cu124{v("12.4"),    std::vector<util::Version>{v("5.0"), v("8.0"), v("8.6"), v("9.0")},
                         std::nullopt, std::nullopt,
                         "pip",        ""};
  const auto k = kernels(cu124);
  ASSERT_TRUE(k);
  EXPECT_EQ(runs_on(*k, v("8.9"), true).describe(), "sm_86 cubin") << "an sm_86 cubin runs on 8.9";
  EXPECT_FALSE(runs_on(*k, v("12.0"), true).runs());
  EXPECT_FALSE(runs_on(*k, v("3.5"), true).runs());
  FrameworkVariant ptx = cu124;
  ptx.ptx = v("9.0");
  EXPECT_EQ(runs_on(*kernels(ptx), v("12.0"), true).how, compat::How::ptx_jit);
  EXPECT_FALSE(runs_on(*kernels(ptx), v("12.0"), false).runs()) << "PTX only, and no JIT";
  FrameworkVariant unknown{v("12.5"), std::nullopt, std::nullopt, std::nullopt, "pip", ""};
  EXPECT_FALSE(kernels(unknown));
  FrameworkVariant minimum{v("12.1"), std::nullopt, std::nullopt, v("5.2"), "pip", ""};
  EXPECT_TRUE(runs_on(*kernels(minimum), v("8.9"), true).runs());
  EXPECT_FALSE(runs_on(*kernels(minimum), v("5.0"), true).runs());
}

TEST(KbQueries, ToolkitTargetsAndDriverAgainstGpu) {
  const auto& kb = builtin();
  // CUDA 11.7 cannot compile for sm_89, but its sm_8x cubins run there (the closest is sm_87).
  EXPECT_FALSE(kb.toolkit_targets_cc(v("11.7"), v("8.9")));
  EXPECT_EQ(compat::runs_on(kb.toolkit_targets(v("11.7")), v("8.9")).describe(), "sm_87 cubin");
  EXPECT_EQ(compat::runs_on(kb.toolkit_targets(v("11.0")), v("8.9")).describe(), "sm_80 cubin");
  EXPECT_EQ(compat::runs_on(kb.toolkit_targets(v("11.0")), v("9.0")).how, compat::How::ptx_jit);
  const auto old = kb.driver_vs_cc(v("470.256.02"), v("8.9"));
  ASSERT_TRUE(old);
  EXPECT_TRUE(old->too_old);
  EXPECT_FALSE(kb.driver_vs_cc(v("535.104.05"), v("8.9")));
}

// Where the source article is wrong (shared/reference/seed-claims.md), the data follows
// NVIDIA's documents.
TEST(KbFacts, ArticleClaimsCorrected) {
  const auto& kb = builtin();
  // (a) Ada needs CUDA 11.8 and driver 520.61.05, not 525.60.13 (CUDA 12.0's minimum).
  EXPECT_EQ(kb.arch_cc(*util::Version::parse("8.9"))->first_cuda.str(), "11.8");
  EXPECT_EQ(kb.min_driver_for_cc(*util::Version::parse("8.9"))->str(), "520.61.05");
  // (c) Volta is supported through CUDA 12.9 and dropped in 13.0, not in 12.0.
  EXPECT_TRUE(kb.toolkit_targets_cc(*util::Version::parse("12.0"), *util::Version::parse("7.0")));
  EXPECT_EQ(kb.arch_cc(*util::Version::parse("7.0"))->last_cuda->str(), "12.9");
  // (i) 35 is "driver too old for the runtime", 100 no device, 2 out of memory; 38 is unused.
  EXPECT_EQ(kb.cuda_error("runtime", 35)->name, "cudaErrorInsufficientDriver");
  EXPECT_EQ(kb.cuda_error("runtime", 100)->name, "cudaErrorNoDevice");
  EXPECT_EQ(kb.cuda_error("runtime", 2)->name, "cudaErrorMemoryAllocation");
  EXPECT_EQ(kb.cuda_error("runtime", 46)->name, "cudaErrorDevicesUnavailable");
  EXPECT_EQ(kb.cuda_error("runtime", 38)->status, "unverified");
  // (b) 450.80.02 is the CUDA 11.x minor-version-compatibility floor.
  EXPECT_EQ(kb.minor_compat_floor(11)->str(), "450.80.02");
}

}  // namespace
}  // namespace cudoctor::kb
