#include "cudoctor/snapshot/snapshot_json.hpp"

#include <gtest/gtest.h>

namespace cudoctor::snapshot {

// Every struct with every field set away from its default, so a field missing from the JSON
// mapping breaks the round trip.
Snapshot populated() {
  Snapshot s;
  s.tool_version = "0.1.0";
  s.root = "/fixture";
  s.host = {"ubuntu",
            "22.04",
            "Ubuntu 22.04.4 LTS",
            "6.5.0-35-generic",
            "x86_64",
            "box",
            "ana",
            1000,
            {1000, 44},
            {"docker", {"/.dockerenv exists"}},
            {"wsl2", {"/dev/dxg exists"}},
            {"kvm", {"flag"}},
            true,
            "value 1"};
  s.host.os_like = {"rhel", "centos", "fedora"};
  s.host.tools = {{"nvidia-smi", "/usr/bin/nvidia-smi"}, {"uv", "/home/ana/.local/bin/uv"}};
  s.host.packages = {{"nvidia-driver-535", "535.183.01-0ubuntu1", "dpkg"}, {"cuda", "12.4.1-1", "pacman"}};
  s.host.packages_known = {"dpkg", "pacman"};
  s.host.nvidia_env = {{"NVIDIA_VISIBLE_DEVICES", "all", "/proc/1/environ"},
                       {"CUDA_MODULE_LOADING", "LAZY", "environment"}};
  PciDevice p{"0000:01:00.0", 0x10de, 0x28e0,   0x17aa,          0x3c5a,           0x030000, "NVIDIA Corporation",
              "AD107M",       "sub",  "nvidia", "2.5 GT/s PCIe", "16.0 GT/s PCIe", 8,        8,
              "suspended",    true};
  s.driver.modules = {{"nvidia", true, "Live"}};
  s.driver.modules_listed = true;
  s.driver.blacklists = {{"nouveau", "/etc/modprobe.d/x.conf:1", "blacklist nouveau"}};
  s.driver.blacklist_sources_unreadable = {"/run/modprobe.d"};
  s.driver.kernel_module = {"535.104.05", "/proc/driver/nvidia/version", "NVRM version: …", "proprietary"};
  s.driver.module_files = {"/lib/modules/6.5.0-35-generic/updates/dkms/nvidia.ko.zst"};
  s.driver.device_nodes = {{"/dev/nvidia0", NodeType::char_device, 195, 0, 0666, 0, 44, true, false}};
  s.driver.nvidia_modprobe = "/usr/bin/nvidia-modprobe";
  s.driver.nvidia_modprobe_setuid = true;
  s.driver.libraries = {{"libcuda.so.1",
                         "/usr/lib/libcuda.so.1",
                         "/usr/lib/libcuda.so.535.104.05",
                         "535.104.05",
                         "default directory",
                         {"/opt"}},
                        {"libnvidia-ml.so.1",
                         "",
                         "",
                         "",
                         "",
                         {"/usr/lib"},
                         {{"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "dangling", "libnvidia-ml.so.535.104.05", ""},
                          {"/usr/lib/libnvidia-ml.so.1", "wrong_class", "", "wrong ELF class: ELFCLASS32"}}}};
  s.driver.nvml.library = "/usr/lib/libnvidia-ml.so.1";
  s.driver.nvml.outcome = {ChildStatus::ok, 0, 0, 0.25, "fine"};
  s.driver.nvml.init_code = 0;
  s.driver.nvml.init_error_name = "NVML_SUCCESS";
  s.driver.nvml.init_error_string = "Success";
  s.driver.nvml.driver_version = "535.104.05";
  s.driver.nvml.cuda_driver_version = 12020;
  s.driver.other_display_devices = {p};
  s.driver.pci_listed = true;
  NvmlGpu g{1,          "NVIDIA GeForce RTX 4060 Laptop GPU",
            "GPU-1",    "0000:01:00.0",
            8ull << 30, 1ull << 20,
            40,         3,
            1,          115,
            12,         210,
            210,        405,
            3105,       8001,
            1,          4,
            8,          8,
            "disabled", "",
            "8.9",      {"nvmlDeviceGetPowerUsage: Not Supported"}};
  s.driver.nvml.gpus = {g};
  s.gpus = {{p, g}, {PciDevice{}, std::nullopt}};
  s.unreadable = {{"/proc/modules", "Permission denied"}};
  s.python.lists_cut = {{"/opt/conda/envs", 20000, 10000}};
  PythonEnv env;
  env.prefix = "/home/ana/venv";
  env.site_packages = {"/home/ana/venv/lib/python3.11/site-packages", "/usr/lib/python3/dist-packages"};
  env.system_site_packages = true;
  env.base_prefix = "/usr";
  env.conda_meta = true;
  Framework fw;
  fw.name = "torch";
  fw.installer = "uv";
  fw.inherited = true;
  fw.cuda_unknown = true;
  env.frameworks = {fw};
  s.python.envs = {env};
  return s;
}

TEST(SnapshotJson, RoundTripsEveryField) {
  const auto s = populated();
  const nlohmann::json j = s;
  const auto back = j.get<Snapshot>();
  EXPECT_EQ(back, s);
  EXPECT_EQ(j["gpus"][1]["nvml"], nullptr);
}

// The keys of the facts added for rules to come: the JSON contract names them.
TEST(SnapshotJson, HostPackageAndLibraryKeys) {
  const nlohmann::json j = populated();
  const auto& h = j["host"];
  EXPECT_EQ(h["os_like"], (nlohmann::json{"rhel", "centos", "fedora"}));
  EXPECT_EQ(h["tools"][0], (nlohmann::json{{"name", "nvidia-smi"}, {"path", "/usr/bin/nvidia-smi"}}));
  EXPECT_EQ(h["packages"][0],
            (nlohmann::json{{"name", "nvidia-driver-535"}, {"version", "535.183.01-0ubuntu1"}, {"manager", "dpkg"}}));
  EXPECT_EQ(h["packages_known"], (nlohmann::json{"dpkg", "pacman"}));
  EXPECT_EQ(h["nvidia_env"][0],
            (nlohmann::json{{"name", "NVIDIA_VISIBLE_DEVICES"}, {"value", "all"}, {"source", "/proc/1/environ"}}));
  EXPECT_EQ(j["driver"]["libraries"][1]["candidates"][0],
            (nlohmann::json{{"path", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"},
                            {"state", "dangling"},
                            {"target", "libnvidia-ml.so.535.104.05"},
                            {"reason", ""}}));
  const auto& env = j["python"]["envs"][0];
  EXPECT_EQ(env["system_site_packages"], true);
  EXPECT_EQ(env["base_prefix"], "/usr");
  EXPECT_EQ(env["conda_meta"], true);
  EXPECT_EQ(env["frameworks"][0]["installer"], "uv");
  EXPECT_EQ(env["frameworks"][0]["inherited"], true);
}

TEST(SnapshotJson, MissingKeysReadAsDefaults) {
  const auto s = snapshot_from_json_text(R"({"schema": 1, "host": {"os_id": "debian"}})");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->host.os_id, "debian");
  EXPECT_EQ(s->driver.nvml.init_code, -1);
}

// The statuses are a JSON contract: each one's string, both ways; an unknown one reads as unset.
TEST(SnapshotJson, ChildStatusKeepsItsStrings) {
  const std::pair<ChildStatus, const char*> strings[] = {
      {ChildStatus::unset, ""},
      {ChildStatus::ok, "ok"},
      {ChildStatus::crashed, "crashed"},
      {ChildStatus::timeout, "timeout"},
      {ChildStatus::exited, "exited"},
      {ChildStatus::bad_reply, "bad_reply"},
      {ChildStatus::failed_to_start, "failed_to_start"},
      {ChildStatus::not_run, "not_run"},
      {ChildStatus::load_failed, "load_failed"},
      {ChildStatus::child_error, "child_error"},
  };
  for (const auto& [status, text] : strings) {
    EXPECT_EQ(nlohmann::json(status), text);
    EXPECT_EQ(to_string(status), text);
    EXPECT_EQ(nlohmann::json(text).get<ChildStatus>(), status) << text;
  }
  EXPECT_EQ(nlohmann::json("interrupted").get<ChildStatus>(), ChildStatus::unset);
  ChildOutcome o;
  o.status = ChildStatus::timeout;
  EXPECT_EQ(nlohmann::json(o)["status"], "timeout");
}

TEST(SnapshotJson, RejectsWhatIsNotASnapshot) {
  EXPECT_FALSE(snapshot_from_json_text("[1,2]"));
  EXPECT_FALSE(snapshot_from_json_text("{\"schema\": \"1\"}"));
  EXPECT_FALSE(snapshot_from_json_text("{\"schema\": 99}"));
  const auto bad = snapshot_from_json_text("{\"schema\": 1, \"gpus\": 7}");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("invalid snapshot JSON"), std::string::npos);
  EXPECT_FALSE(snapshot_from_json_text("{truncated"));
}

}  // namespace cudoctor::snapshot

namespace cudoctor::snapshot {

TEST(SnapshotJson, EnumsWriteTodaysStrings) {
  EXPECT_EQ(nlohmann::json(NodeType::char_device), "char_device");
  EXPECT_EQ(nlohmann::json(NodeType::file), "file");
  EXPECT_EQ(nlohmann::json(NodeType::missing), "missing");
  const std::vector<ToolkitFoundBy> found = {{ToolkitFinder::usr_local_dir, ""},
                                             {ToolkitFinder::nvcc_on_path, ""},
                                             {ToolkitFinder::conda_environment, "/opt/conda/envs/a b"},
                                             {ToolkitFinder::other, "/usr/local/cuda link"}};
  const nlohmann::json j = found;
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"(["/usr/local/cuda-* directory", "nvcc on PATH", "conda environment /opt/conda/envs/a b",
                       "/usr/local/cuda link"])"));
  EXPECT_EQ(j.get<std::vector<ToolkitFoundBy>>(), found);
}

}  // namespace cudoctor::snapshot
