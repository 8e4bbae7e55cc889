#include <gtest/gtest.h>

#include "cudoctor/render/render.hpp"

namespace cudoctor::render {
namespace {

elf::Fatbin sm86_fatbin() {
  elf::Fatbin fb;
  fb.containers = 1;
  elf::FatbinEntry e;
  e.kind = elf::FatbinEntry::Kind::cubin;
  e.arch = 86;
  fb.entries.push_back(e);
  return fb;
}

RunsOn runs_on(const elf::Fatbin& fb, const char* cc) {
  const auto v = *util::Version::parse(cc);
  return {v, elf::can_run(fb, v)};
}

TEST(ArchsText, SaysWhetherItRunsOnTheComputeCapability) {
  const auto fb = sm86_fatbin();
  EXPECT_EQ(archs_text("/x.so", fb, runs_on(fb, "8.9")),
            "/x.so\n  cubins: sm_86\n  PTX:    none\n  1 entries in 1 containers, 0 compressed\n"
            "  runs on compute capability 8.9: sm_86 cubin\n");
  EXPECT_EQ(archs_text("/x.so", fb, runs_on(fb, "9.0")),
            "/x.so\n  cubins: sm_86\n  PTX:    none\n  1 entries in 1 containers, 0 compressed\n"
            "  does not run on compute capability 9.0: no compatible cubin or PTX\n");
  EXPECT_EQ(archs_text("/x.so", fb),
            "/x.so\n  cubins: sm_86\n  PTX:    none\n  1 entries in 1 containers, 0 compressed\n");
  EXPECT_EQ(
      archs_text("/y", std::nullopt, RunsOn{*util::Version::parse("8.0"), {}}),
      "/y\n  no CUDA fatbin (.nv_fatbin)\n  does not run on compute capability 8.0: no compatible cubin or PTX\n");
}

TEST(ArchsJson, RunsOnOnlyWithACapability) {
  const auto fb = sm86_fatbin();
  EXPECT_FALSE(archs_json("/x.so", fb).contains("runs_on"));
  const auto j = archs_json("/x.so", fb, runs_on(fb, "8.9"));
  EXPECT_EQ(j["runs_on"], (nlohmann::json{{"cc", "8.9"}, {"runs", true}, {"via", "sm_86 cubin"}}));
  const auto none = archs_json("/y", std::nullopt, RunsOn{*util::Version::parse("8.0"), {}});
  EXPECT_EQ(none["runs_on"], (nlohmann::json{{"cc", "8.0"}, {"runs", false}, {"via", ""}}));
}

}  // namespace
}  // namespace cudoctor::render
