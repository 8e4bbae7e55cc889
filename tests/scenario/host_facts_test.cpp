// The host facts rules build on, as `cudoctor --json` prints them for trees laid out as the
// distributions and tools lay them out: ID_LIKE, helper programs, dpkg's and pacman's
// databases, the container's NVIDIA variables, driver libraries the loader does not take,
// venvs that see the system's site-packages, who installed a framework.
#include <gtest/gtest.h>

#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

using nlohmann::json;

// A CUDA base image's container on Ubuntu 22.04 whose driver mount went stale: the
// libcuda.so.1 link points at a version no longer there, NVML sits off the loader's path.
void build_container(FixtureRoot& r) {
  add_ubuntu_2204(r, "6.5.0-35-generic", "job-7f3c");
  r.file("/.dockerenv", "");
  const std::string environ[] = {"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin",
                                 "NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
                                 "NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470,driver<471",
                                 "HOSTNAME=job-7f3c"};
  std::string text;
  for (const auto& e : environ) text += e + std::string(1, '\0');
  r.file("/proc/1/environ", text, 0400);
  r.file("/var/lib/dpkg/status",
         "Package: libc6\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\n"
         "Version: 2.35-0ubuntu3.8\nDescription: GNU C Library: Shared libraries\n Contains the standard libraries.\n\n"
         "Package: cuda-cudart-12-4\nStatus: install ok installed\nArchitecture: amd64\nVersion: 12.4.127-1\n\n"
         "Package: libcudnn9-cuda-12\nStatus: hold ok installed\nArchitecture: amd64\nVersion: 9.1.0.70-1\n\n"
         "Package: libnccl2\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 2.21.5-1+cuda12.4\n");
  r.file("/usr/bin/nvidia-smi", "#!/bin/sh\n", 0755);
  r.file("/usr/bin/pip", "#!/bin/sh\n", 0644);
  r.file("/usr/sbin/ldconfig.real",
         "\x7f"
         "ELF",
         0755)
      .link("/usr/sbin/ldconfig", "ldconfig.real");
  r.link("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.550.54.15");
  r.file("/usr/local/nvidia/lib64/libnvidia-ml.so.1",
         "\x7f"
         "ELF");
  // A venv made with --system-site-packages over Debian's python3-torch.
  r.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.10.12\n");
  r.dir("/home/u/venv/lib/python3.10/site-packages");
  r.file("/usr/lib/python3/dist-packages/torch/version.py", "__version__ = '2.1.2'\ncuda = None\n");
  r.file("/usr/lib/python3/dist-packages/torch-2.1.2.dist-info/INSTALLER", "debian\n");
}

const std::map<std::string, std::string> k_container_env = {{"PATH", "/home/u/venv/bin:/usr/local/bin:/usr/bin:/bin"},
                                                            {"VIRTUAL_ENV", "/home/u/venv"},
                                                            {"CUDA_MODULE_LOADING", "LAZY"}};

TEST(ScenarioHostFacts, ContainerHostFacts) {
  FixtureRoot r;
  build_container(r);
  const auto c = check_root(r, {}, k_container_env);
  const auto& h = c.report["host"];
  EXPECT_EQ(h["os_id"], "ubuntu");
  EXPECT_EQ(h["os_like"], json::array({"debian"}));
  EXPECT_EQ(h["tools"], json::parse(R"([{"name": "nvidia-smi", "path": "/usr/bin/nvidia-smi"},
                                        {"name": "ldconfig", "path": "/usr/sbin/ldconfig"}])"))
      << "pip has no execute bit";
  EXPECT_EQ(h["packages"], json::parse(R"([{"name": "cuda-cudart-12-4", "version": "12.4.127-1", "manager": "dpkg"},
                                           {"name": "libcudnn9-cuda-12", "version": "9.1.0.70-1", "manager": "dpkg"}])"));
  EXPECT_EQ(h["packages_known"], json::array({"dpkg"}));
  EXPECT_EQ(h["nvidia_env"], json::parse(R"([
      {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all", "source": "/proc/1/environ"},
      {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility", "source": "/proc/1/environ"},
      {"name": "NVIDIA_REQUIRE_CUDA", "value": "cuda>=12.4 brand=tesla,driver>=470,driver<471", "source": "/proc/1/environ"},
      {"name": "CUDA_MODULE_LOADING", "value": "LAZY", "source": "environment"}])"));
}

TEST(ScenarioHostFacts, DriverLibrariesInstalledButNotLoadable) {
  FixtureRoot r;
  build_container(r);
  const auto c = check_root(r, {}, k_container_env);
  const auto& libs = c.report["driver"]["libraries"];
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0]["soname"], "libcuda.so.1");
  EXPECT_EQ(libs[0]["path"], "");
  EXPECT_EQ(libs[0]["candidates"], json::parse(R"([{"path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
      "state": "dangling", "target": "libcuda.so.550.54.15", "reason": ""}])"));
  EXPECT_EQ(libs[1]["soname"], "libnvidia-ml.so.1");
  EXPECT_EQ(libs[1]["candidates"], json::parse(R"([{"path": "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
      "state": "off_loader_path", "target": "", "reason": ""}])"));
}

TEST(ScenarioHostFacts, VenvSeesTheSystemSitePackages) {
  FixtureRoot r;
  build_container(r);
  const auto c = check_root(r, {}, k_container_env);
  json venv;
  for (const auto& e : c.report["pythons"])
    if (e["prefix"] == "/home/u/venv") venv = e;
  ASSERT_TRUE(venv.is_object()) << c.report["pythons"].dump(2);
  EXPECT_EQ(venv["kind"], "venv");
  EXPECT_EQ(venv["system_site_packages"], true);
  EXPECT_EQ(venv["base_prefix"], "/usr");
  EXPECT_EQ(venv["conda_meta"], false);
  EXPECT_EQ(venv["site_packages"],
            json::array({"/home/u/venv/lib/python3.10/site-packages", "/usr/lib/python3/dist-packages"}));
  ASSERT_EQ(venv["frameworks"].size(), 1u);
  EXPECT_EQ(venv["frameworks"][0]["name"], "torch");
  EXPECT_EQ(venv["frameworks"][0]["version"], "2.1.2");
  EXPECT_EQ(venv["frameworks"][0]["inherited"], true);
  EXPECT_EQ(venv["frameworks"][0]["installer"], "debian");
}

TEST(ScenarioHostFacts, RpmDistributionsPackagesAreUnknown) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  r.file("/etc/os-release",
         "NAME=\"Rocky Linux\"\nVERSION=\"9.3 (Blue Onyx)\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n"
         "VERSION_ID=\"9.3\"\nPRETTY_NAME=\"Rocky Linux 9.3 (Blue Onyx)\"\n");
  r.file("/var/lib/rpm/rpmdb.sqlite", "SQLite format 3");
  // A conda environment whose torch came from the pytorch channel (no INSTALLER file).
  const std::string env = "/opt/conda/envs/ml";
  r.file(env + "/conda-meta/pytorch-2.5.1-py3.11_cuda12.4_cudnn9.1.0_0.json", "{}");
  r.file(env + "/conda-meta/pytorch-cuda-12.4-hc786d27_7.json", "{}");
  r.file(env + "/lib/python3.11/site-packages/torch/version.py", "__version__ = '2.5.1'\ncuda = None\n");
  const auto c = check_root(r);
  EXPECT_EQ(c.report["host"]["os_id"], "rocky");
  EXPECT_EQ(c.report["host"]["os_like"], json::array({"rhel", "centos", "fedora"}));
  EXPECT_EQ(c.report["host"]["packages"], json::array());
  EXPECT_EQ(c.report["host"]["packages_known"], json::array()) << "rpm's database is not read";
  json conda;
  for (const auto& e : c.report["pythons"])
    if (e["prefix"] == env) conda = e;
  ASSERT_TRUE(conda.is_object()) << c.report["pythons"].dump(2);
  EXPECT_EQ(conda["conda_meta"], true);
  ASSERT_EQ(conda["frameworks"].size(), 1u);
  EXPECT_EQ(conda["frameworks"][0]["installer"], "conda");
  EXPECT_EQ(conda["frameworks"][0]["inherited"], false);
}

TEST(ScenarioHostFacts, PacmanDatabase) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  r.file("/etc/os-release",
         "NAME=\"Manjaro Linux\"\nID=\"manjaro\"\nID_LIKE=\"arch\"\nPRETTY_NAME=\"Manjaro Linux\"\n");
  r.file("/var/lib/pacman/local/ALPM_DB_VERSION", "9\n");
  r.file("/var/lib/pacman/local/nvidia-utils-550.78-1/desc",
         "%NAME%\nnvidia-utils\n\n%VERSION%\n550.78-1\n\n%BASE%\nnvidia-utils\n\n%ARCH%\nx86_64\n");
  r.file("/var/lib/pacman/local/linux69-nvidia-550.78-4/desc", "%NAME%\nlinux69-nvidia\n\n%VERSION%\n550.78-4\n");
  r.file("/var/lib/pacman/local/glibc-2.39-1/desc", "%NAME%\nglibc\n\n%VERSION%\n2.39-1\n");
  const auto c = check_root(r);
  EXPECT_EQ(c.report["host"]["os_like"], json::array({"arch"}));
  EXPECT_EQ(c.report["host"]["packages"],
            json::parse(R"([{"name": "linux69-nvidia", "version": "550.78-4", "manager": "pacman"},
                            {"name": "nvidia-utils", "version": "550.78-1", "manager": "pacman"}])"));
  EXPECT_EQ(c.report["host"]["packages_known"], json::array({"pacman"}));
}

}  // namespace
}  // namespace cudoctor::testing
