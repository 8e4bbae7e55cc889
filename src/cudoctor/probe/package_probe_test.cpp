#include <gtest/gtest.h>

#include "cudoctor/probe/probes.hpp"
#include "fake_sys.hpp"

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

}  // namespace cudoctor::probe
