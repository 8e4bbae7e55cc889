#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"
#include "fake_sys.hpp"
#include "run_cli.hpp"

namespace cudoctor::probe {

// Stanzas as dpkg writes /var/lib/dpkg/status: fields, continuation lines, blank separators.
const char* const k_status =
    "Package: bash\nEssential: yes\nStatus: install ok installed\nPriority: required\nVersion: 5.2.21-2ubuntu4\n\n"
    "Package: nvidia-driver-535\nStatus: install ok installed\nArchitecture: amd64\nVersion: "
    "535.183.01-0ubuntu0.22.04.1\n"
    "Description: NVIDIA driver metapackage\n This metapackage depends on the NVIDIA binary driver\n"
    " Package: not-a-field\n .\n and libraries that provide optimized hardware acceleration.\n\n"
    "Package: libcudnn8\nStatus: hold ok installed\nVersion: 8.9.7.29-1+cuda12.2\n\n"
    "Package: nvidia-driver-470\nStatus: deinstall ok config-files\nVersion: 470.239.06-0ubuntu0.22.04.1\n\n"
    "Package: cuda-toolkit-12-4\nStatus: install ok not-installed\n\n"
    "Package: python3-torch\nStatus: install ok installed\nVersion: 2.1.2+dfsg-1\n\n"
    "Package: xserver-xorg-video-nouveau\nStatus: install ok installed\nVersion: 1:1.0.17-2build1\n";

TEST(PackageProbe, DpkgInstalledPackagesThatConcernCuda) {
  sys::FakeSys s;
  s.file("/var/lib/dpkg/status", k_status);
  Context ctx(s, {});
  snapshot::HostFacts h;
  probe_packages(ctx, h);
  ASSERT_EQ(h.packages.size(), 4u);
  EXPECT_EQ(h.packages[0], (snapshot::Package{"nvidia-driver-535", "535.183.01-0ubuntu0.22.04.1", "dpkg"}));
  EXPECT_EQ(h.packages[1], (snapshot::Package{"libcudnn8", "8.9.7.29-1+cuda12.2", "dpkg"})) << "held is installed";
  EXPECT_EQ(h.packages[2], (snapshot::Package{"python3-torch", "2.1.2+dfsg-1", "dpkg"}));
  EXPECT_EQ(h.packages[3], (snapshot::Package{"xserver-xorg-video-nouveau", "1:1.0.17-2build1", "dpkg"}));
  EXPECT_EQ(h.packages_known, (std::vector<std::string>{"dpkg"}));
  EXPECT_TRUE(ctx.take_unreadable().empty());
}

TEST(PackageProbe, PacmanLocalDatabaseReadsOnlyRelevantDescFiles) {
  sys::FakeSys s;
  s.file("/var/lib/pacman/local/ALPM_DB_VERSION", "9\n");
  s.file("/var/lib/pacman/local/nvidia-utils-550.78-1/desc",
         "%NAME%\nnvidia-utils\n\n%VERSION%\n550.78-1\n\n%BASE%\nnvidia-utils\n\n%DESC%\nNVIDIA drivers utilities\n");
  s.file("/var/lib/pacman/local/cuda-12.4.1-4/desc", "%NAME%\ncuda\n\n%VERSION%\n12.4.1-4\n");
  s.file("/var/lib/pacman/local/bash-5.2.026-2/desc", "%NAME%\nbash\n\n%VERSION%\n5.2.026-2\n");
  Context ctx(s, {});
  snapshot::HostFacts h;
  probe_packages(ctx, h);
  ASSERT_EQ(h.packages.size(), 2u);
  EXPECT_EQ(h.packages[0], (snapshot::Package{"cuda", "12.4.1-4", "pacman"}));
  EXPECT_EQ(h.packages[1], (snapshot::Package{"nvidia-utils", "550.78-1", "pacman"}));
  EXPECT_EQ(h.packages_known, (std::vector<std::string>{"pacman"}));
  EXPECT_EQ(s.reads().count("/var/lib/pacman/local/bash-5.2.026-2/desc"), 0u);
}

TEST(PackageProbe, AnUnreadableDatabaseIsUnknownNotEmpty) {
  sys::FakeSys s;
  s.file("/var/lib/dpkg/status", k_status).fail("/var/lib/dpkg/status", "Permission denied");
  Context ctx(s, {});
  snapshot::HostFacts h;
  probe_packages(ctx, h);
  EXPECT_TRUE(h.packages.empty());
  EXPECT_TRUE(h.packages_known.empty());
  const auto u = ctx.take_unreadable();
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0], (snapshot::Unreadable{"/var/lib/dpkg/status", "Permission denied"}));

  sys::FakeSys none;  // no package manager of the two: nothing known, nothing unreadable
  Context ctx2(none, {});
  snapshot::HostFacts h2;
  probe_packages(ctx2, h2);
  EXPECT_TRUE(h2.packages_known.empty());
  EXPECT_TRUE(ctx2.take_unreadable().empty());
}

// The status file is read 64 KiB at a time: a field, a value and a stanza's blank separator
// cut by the chunk boundary are read whole, and a last line without its line feed counts.
TEST(PackageProbe, StanzasCutByTheReadBufferAreReadWhole) {
  std::string text;
  const auto pad_to = [&](std::size_t offset) {  // a stanza of no interest, ending exactly there
    const auto need = offset - text.size();
    ASSERT_GE(need, 28u);
    text += "Package: pad\nDescription: " + std::string(need - 28, 'y') + "\n\n";
    ASSERT_EQ(text.size(), offset);
  };
  constexpr std::size_t k = 65536;
  pad_to(k - 5);  // "Packa|ge: cuda-12-4"
  text += "Package: cuda-12-4\nStatus: install ok installed\nVersion: 12.4.1-1\n\n";
  const std::string cudnn = "Package: libcudnn9\nStatus: install ok installed\nVersion: 9.1.";
  pad_to(2 * k - cudnn.size());  // "9.1.|0.70-1"
  text += cudnn + "0.70-1\n\n";
  const std::string a = "Package: nvidia-a\nStatus: install ok installed\nVersion: 1\n";
  pad_to(3 * k - a.size());  // the blank line that ends nvidia-a is the next chunk's first byte
  text += a + "\nPackage: nvidia-b\nStatus: install ok not-installed\nVersion: 2\n\n";
  text += "Package: nvidia-c\nStatus: install ok installed\nVersion: 3";
  sys::FakeSys s;
  s.file("/var/lib/dpkg/status", text);
  Context ctx(s, {});
  snapshot::HostFacts h;
  probe_packages(ctx, h);
  EXPECT_EQ(h.packages, (std::vector<snapshot::Package>{{"cuda-12-4", "12.4.1-1", "dpkg"},
                                                        {"libcudnn9", "9.1.0.70-1", "dpkg"},
                                                        {"nvidia-a", "1", "dpkg"},
                                                        {"nvidia-c", "3", "dpkg"}}));
  EXPECT_EQ(h.packages_known, (std::vector<std::string>{"dpkg"}));
  EXPECT_TRUE(ctx.take_unreadable().empty());
}

// This machine's real status file against dpkg-query: the packages found are the installed ones
// whose names concern CUDA, each with dpkg's version.
TEST(PackageProbe, ThisMachinesPackagesAreTheOnesDpkgQueryLists) {
  const auto out = testing::shell_output("dpkg-query -W -f='${Status}\\t${Package}\\t${Version}\\n' 2>/dev/null");
  if (out.empty()) GTEST_SKIP() << "no dpkg-query here";
  std::set<std::tuple<std::string, std::string>> expected;
  for (const auto line : util::split(out, '\n')) {
    const auto cols = util::split(line, '\t');
    if (cols.size() != 3 || !cols[0].ends_with(" ok installed")) continue;
    for (const char* w : {"nvidia", "cuda", "cudnn", "nccl", "nouveau", "tensorrt", "python3-torch"})
      if (util::contains_icase(cols[1], w)) {
        expected.emplace(std::string(cols[1]), std::string(cols[2]));
        break;
      }
  }
  const auto sys = sys::make_root_sys("/");
  Context ctx(*sys, {});
  snapshot::HostFacts h;
  probe_packages(ctx, h);
  std::set<std::tuple<std::string, std::string>> got;
  for (const auto& p : h.packages)
    if (p.manager == "dpkg") got.emplace(p.name, p.version);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(std::count(h.packages_known.begin(), h.packages_known.end(), "dpkg"), 1);
}

}  // namespace cudoctor::probe
