#include "cudoctor/probe/pci_ids.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace cudoctor::probe {

// An excerpt in the pciutils format, as pci.ids writes it.
constexpr const char* k_excerpt =
    "# comment\n"
    "10de  NVIDIA Corporation\n"
    "\t2330  GH100[H100 SXM5 80GB]\n"
    "\t28e0  AD107M [GeForce RTX 4060 Max-Q / Mobile]\n"
    "\t\t1028 0c25  GeForce RTX 4060 Laptop GPU\n"
    "8086  Intel Corporation\n"
    "\ta7a0  Raptor Lake-P [Iris Xe Graphics]\n"
    "C 03  Display controller\n"
    "\t00  VGA compatible controller\n";

TEST(PciIds, KeepsOnlyTheVendorsAskedFor) {
  const auto ids = PciIds::parse(k_excerpt, {0x10de});
  EXPECT_EQ(ids.vendor(0x10de), "NVIDIA Corporation");
  EXPECT_EQ(ids.vendor(0x8086), "Intel Corporation");
  EXPECT_EQ(ids.device(0x10de, 0x2330), "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(ids.subsystem(0x10de, 0x28e0, 0x1028, 0x0c25), "GeForce RTX 4060 Laptop GPU");
  EXPECT_EQ(ids.device(0x8086, 0xa7a0), "") << "Intel was not asked for";
}

TEST(PciIds, ToleratesGarbage) {
  const auto ids = PciIds::parse("zzzz\n\t\t\n\txx\n10de\n\t\t1\n", {0x10de});
  EXPECT_EQ(ids.device(0x10de, 0x2330), "");
}

TEST(PciIds, ReadsTheMachinesDatabase) {
  const std::string path = "/usr/share/misc/pci.ids";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (package pci.ids)";
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  const auto ids = PciIds::parse(ss.str(), {0x10de});
  EXPECT_EQ(ids.device(0x10de, 0x2330), "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(ids.device(0x10de, 0x28e0), "AD107M [GeForce RTX 4060 Max-Q / Mobile]");
}

}  // namespace cudoctor::probe
