// What the knowledge base knows it does not know: release status, branch-only minimum drivers,
// records that stand for a range of releases, and the consistency checks that hold the tables
// to each other. Small in-memory tables, so that each case is the one it names.
#include <gtest/gtest.h>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/kb/kb_test_support.hpp"

namespace cudoctor::kb {
namespace {

util::Version v(const char* s) {
  return *util::Version::parse(s);
}

using kb::testing::files_with;

TEST(KbStatus, AnUnknownStatusIsALoadError) {
  const auto r = KnowledgeBase::load(files_with({{"frameworks.json", R"({"frameworks": [{"name": "torch",
      "display": "PyTorch", "releases": [{"version": "2.9", "status": "released-ish",
      "variants": [{"cuda": "12.4", "install": "pip"}], "source": "https://a/"}]}]})"}}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "frameworks.json torch release record 0: \"status\" is not one of secondary, unverified, planned, "
            "withdrawn: 'released-ish'");
}

TEST(KbReleases, RecordsStandForTheirReleasesAndNoMore) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  const auto& ort = *kb->framework("onnxruntime");
  EXPECT_EQ(kb->release_of(ort, v("1.22.0"))->version, "1.19") << "1.19 stands for 1.19-1.26";
  EXPECT_EQ(kb->release_of(ort, v("1.26.1"))->version, "1.19");
  EXPECT_EQ(kb->release_of(ort, v("1.29.0"))->version, "1.27") << "the newest line is open";
  EXPECT_FALSE(kb->release_beyond_kb(ort, v("1.29.0")));
  EXPECT_EQ(kb->release_of(ort, v("1.16.3")), nullptr);
  const auto& torch = *kb->framework("torch");
  EXPECT_EQ(kb->release_of(torch, v("2.5.1"))->version, "2.5");
  EXPECT_FALSE(kb->release_beyond_kb(torch, v("2.5.1")));
  EXPECT_EQ(kb->release_of(torch, v("2.99.0")), nullptr);
  EXPECT_TRUE(kb->release_beyond_kb(torch, v("2.99.0")));
  EXPECT_TRUE(kb->release_beyond_kb(torch, v("3.0")));
  EXPECT_FALSE(kb->release_beyond_kb(*kb->framework("jax"), v("0.7.2"))) << "JAX records name plugin lines";
}

TEST(KbDrivers, ABranchOnlyMinimumAndADriverBeyondTheTable) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  const auto* t = kb->first_release_of(v("13.4"));
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->min_driver_exact);
  EXPECT_EQ(t->min_driver_linux.str(), "R615");
  EXPECT_EQ(min_driver_text(*t), "R615 (exact minimum not established)");
  EXPECT_EQ(kb->driver_fit(v("615.71.09"), v("13.4")), DriverFit::native);
  EXPECT_EQ(kb->driver_fit(v("610.43.02"), v("13.4")), DriverFit::minor_compat);
  const auto newest = kb->newest_branch();
  ASSERT_NE(newest, nullptr);
  const auto beyond = util::Version{{newest->branch + 20, 10, 1}, ""};
  EXPECT_TRUE(kb->driver_beyond_kb(beyond));
  EXPECT_FALSE(kb->driver_beyond_kb(v("580.95.05")));
  EXPECT_EQ(kb->max_cuda_for_driver(beyond), newest->max_cuda) << "a floor, said as such by the callers";
}

TEST(KbErrors, FoundByTheMessageInAnyCaseOrInsideAPastedLine) {
  const auto kb = KnowledgeBase::load_embedded();
  ASSERT_TRUE(kb) << kb.error();
  const auto in = kb->find_errors("cuda driver version is INSUFFICIENT");
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in.front()->name, "cudaErrorInsufficientDriver");
  EXPECT_EQ(in.front()->causes.size(), 2u) << "no driver at all, and a driver too old";
  const auto line = kb->find_errors("torch._C._cuda_init(): RuntimeError: no CUDA-capable device is detected");
  ASSERT_EQ(line.size(), 2u);
  EXPECT_EQ(line[0]->name, "cudaErrorNoDevice");
  EXPECT_EQ(line[1]->name, "CUDA_ERROR_NO_DEVICE");
  EXPECT_TRUE(kb->find_errors("the job ended with no error reported").empty())
      << "a short message (\"no error\") inside a pasted line is no match";
  EXPECT_GE(kb->find_errors("error").size(), 5u) << "a word is a substring of many messages";
  EXPECT_TRUE(kb->find_errors("no").empty()) << "under four letters is no message search";
}

TEST(KbConsistency, ContradictingRecordsAreNamed) {
  const auto problems_of = [](const std::vector<std::pair<std::string, std::string>>& replaced) {
    auto kb = KnowledgeBase::load(files_with(replaced));
    EXPECT_TRUE(kb) << kb.error();
    return kb ? kb->problems() : std::vector<std::string>{};
  };
  const auto has = [](const std::vector<std::string>& p, const std::string& text) {
    for (const auto& x : p)
      if (x.find(text) != std::string::npos) return true;
    return false;
  };
  // A toolkit whose minimum driver is of no branch, and one its branch does not support.
  const auto toolkits = problems_of({{"cuda_toolkits.json", R"({"majors": [], "releases": [
      {"cuda": "12.2", "release": "CUDA 12.2 GA", "min_driver_linux": "536.10", "source": "https://a/"},
      {"cuda": "12.1", "release": "CUDA 12.1 GA", "min_driver_linux": "525.60.13", "source": "https://a/"}]})"}});
  EXPECT_TRUE(has(toolkits, "'CUDA 12.2 GA' needs driver 536.10, of no branch in driver_branches.json"));
  EXPECT_TRUE(has(toolkits, "'CUDA 12.1 GA' needs a R525 driver, but driver_branches.json gives R525 CUDA 12.0"));
  // A model named for another architecture than its compute capability's.
  const auto gpus = problems_of({{"gpus.json", R"({"brands": [{"brand": "datacenter", "source": "https://a/"}],
      "records": [{"pci_id": "0x2330", "name": "GH100", "architecture": "Ampere", "cc": "9.0", "brand": "datacenter",
                   "source": "https://a/"}]})"}});
  EXPECT_TRUE(has(gpus, "gpus.json: GH100 is Ampere, but compute capability 9.0 is Hopper in architectures.json"));
  // A torch line whose index is another CUDA's, a release twice, a cuda_max that is no toolkit.
  const auto fw = problems_of({{"frameworks.json", R"({"frameworks": [{"name": "torch", "display": "PyTorch",
      "releases": [
       {"version": "2.5", "variants": [{"cuda": "12.4", "install": "pip install torch --index-url https://download.pytorch.org/whl/cu121"}], "source": "https://a/"},
       {"version": "2.5", "variants": [{"cuda": "12.1", "cuda_max": "12.7", "install": "pip"}], "source": "https://a/"}]}]})"}});
  EXPECT_TRUE(has(fw, "frameworks.json: torch 2.5 CUDA 12.4: the install line's index is not cu124"));
  EXPECT_TRUE(has(fw, "frameworks.json: torch 2.5 is listed twice"));
  EXPECT_TRUE(has(fw, "frameworks.json: torch 2.5: cuda_max 12.7 is not a known toolkit from 12.1"));
}

}  // namespace
}  // namespace cudoctor::kb
