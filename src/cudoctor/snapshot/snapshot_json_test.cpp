#include "cudoctor/snapshot/snapshot_json.hpp"

#include <gtest/gtest.h>

#include <set>

namespace cudoctor::snapshot {
namespace {

// Every struct, every serialised field set away from its default (a non-empty string, a
// non-zero number, a non-empty list, true; false where the default is true), so a field left
// out of the JSON mapping in snapshot_json.cpp reads back as its default and breaks the round
// trip. AllKeysHoldNonDefaults checks that this function keeps that promise.
// HostFacts::private_names, private_homes and host_names are not serialised (they feed
// --redact only) and stay empty.
Snapshot populated() {
  const ChildOutcome outcome{.status = ChildStatus::crashed,
                             .signal = 11,
                             .exit_code = 3,
                             .seconds = 0.25,
                             .message = "killed by signal 11",
                             .last_call = "nvmlInit_v2"};
  const PciDevice pci{.address = "0000:01:00.0",
                      .vendor_id = 0x10de,
                      .device_id = 0x28e0,
                      .subsystem_vendor_id = 0x17aa,
                      .subsystem_device_id = 0x3c5a,
                      .class_code = 0x030000,
                      .vendor_name = "NVIDIA Corporation",
                      .device_name = "AD107M",
                      .subsystem_name = "sub",
                      .driver = "nvidia",
                      .current_link_speed = "2.5 GT/s PCIe",
                      .max_link_speed = "16.0 GT/s PCIe",
                      .current_link_width = 8,
                      .max_link_width = 16,
                      .runtime_status = "suspended",
                      .boot_vga = true,
                      .power_state = "D3cold",
                      .runtime_control = "auto",
                      .port_address = "0000:00:01.1",
                      .port_max_link_speed = "8.0 GT/s PCIe",
                      .port_max_link_width = 8};
  const NvmlGpu nvml_gpu{.index = 1,
                         .name = "NVIDIA GeForce RTX 4060 Laptop GPU",
                         .uuid = "GPU-1",
                         .pci_bus_id = "0000:01:00.0",
                         .memory_total_bytes = 8ull << 30,
                         .memory_used_bytes = 1ull << 20,
                         .temperature_c = 40,
                         .utilization_gpu_pct = 3,
                         .utilization_memory_pct = 1,
                         .power_limit_w = 115,
                         .power_limit_enforced_w = 60,
                         .power_limit_default_w = 115,
                         .power_limit_min_w = 5,
                         .power_limit_max_w = 140,
                         .clocks_event_reasons = 0x4,
                         .performance_state = 2,
                         .max_clock_sm_mhz = 3105,
                         .power_draw_w = 12,
                         .clock_graphics_mhz = 210,
                         .clock_sm_mhz = 211,
                         .clock_memory_mhz = 405,
                         .max_clock_graphics_mhz = 3105,
                         .max_clock_memory_mhz = 8001,
                         .pcie_gen_current = 1,
                         .pcie_gen_max = 4,
                         .pcie_width_current = 8,
                         .pcie_width_max = 16,
                         .persistence_mode = "disabled",
                         .mig_mode = "enabled",
                         .compute_capability = "8.9",
                         .errors = {"nvmlDeviceGetPowerUsage: Not Supported"}};
  const CudaCall failed{.code = 46, .name = "cudaErrorDevicesUnavailable", .message = "busy"};

  Snapshot s;
  s.schema = k_schema_version;
  s.tool_version = "0.1.0";
  s.root = "/fixture";
  s.host = {.os_id = "ubuntu",
            .os_version = "22.04",
            .os_pretty_name = "Ubuntu 22.04.4 LTS",
            .kernel = "6.5.0-35-generic",
            .arch = "x86_64",
            .hostname = "box",
            .user = "ana",
            .uid = 1000,
            .gids = {1000, 44},
            .container = {"docker", {"/.dockerenv exists"}},
            .wsl = {"wsl2", {"/dev/dxg exists"}},
            .hypervisor = {"kvm", {"flag"}},
            .secure_boot = true,
            .secure_boot_evidence = "value 1",
            .os_like = {"rhel", "centos", "fedora"},
            .tools = {{"nvidia-smi", "/usr/bin/nvidia-smi"}, {"uv", "/home/ana/.local/bin/uv"}},
            .packages = {{"nvidia-driver-535", "535.183.01-0ubuntu1", "dpkg"}, {"cuda", "12.4.1-1", "pacman"}},
            .packages_known = {"dpkg", "pacman"},
            .nvidia_env = {{"NVIDIA_VISIBLE_DEVICES", "all", "/proc/1/environ"},
                           {"CUDA_MODULE_LOADING", "LAZY", "environment"}}};
  s.driver = {
      .modules = {{"nvidia", true, "Live"}},
      .modules_listed = true,
      .blacklists = {{"nouveau", "/etc/modprobe.d/x.conf:1", "blacklist nouveau"}},
      .blacklist_sources_unreadable = {"/run/modprobe.d"},
      .kernel_module = {"535.104.05", "/proc/driver/nvidia/version", "NVRM version: …", "proprietary"},
      .module_files = {"/lib/modules/6.5.0-35-generic/updates/dkms/nvidia.ko.zst"},
      .device_nodes = {{"/dev/nvidia0", NodeType::char_device, 195, 1, 0666, 7, 44, true, true}},
      .nvidia_modprobe = "/usr/bin/nvidia-modprobe",
      .nvidia_modprobe_setuid = true,
      .libraries = {{.soname = "libnvidia-ml.so.1",
                     .path = "/usr/lib/libnvidia-ml.so.1",
                     .real_path = "/usr/lib/libnvidia-ml.so.535.104.05",
                     .version = "535.104.05",
                     .found_by = "default directory",
                     .searched = {"/usr/lib"},
                     .candidates = {{"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "wrong_class",
                                     "libnvidia-ml.so.535.104.05", "wrong ELF class: ELFCLASS32"}},
                     .forward_compat =
                         ForwardCompat{
                             .note = true, .note_error = "x", .cuda = "12.4", .drivers = {535}, .devices = {9}}}},
      .libcuda_unversioned =
          {.soname = "libcuda.so",
           .path = "/usr/lib/libcuda.so",
           .real_path = "/usr/lib/libcuda.so.535.104.05",
           .version = "535.104.05",
           .found_by = "default directory",
           .searched = {"/usr/lib"},
           .candidates = {{"/opt/x/libcuda.so", "wrong_class", "libcuda.so.1", "wrong ELF class: ELFCLASS32"}},
           .forward_compat =
               ForwardCompat{
                   .note = true, .note_error = "truncated", .cuda = "12.4", .drivers = {470, 535}, .devices = {7}}},
      .libcuda_unversioned_beside = true,
      .nvml = {.library = "/usr/lib/libnvidia-ml.so.1",
               .outcome = outcome,
               .init_code = 18,
               .init_error_name = "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
               .init_error_string = "Driver/library version mismatch",
               .driver_version = "535.104.05",
               .cuda_driver_version = 12020,
               .gpus = {nvml_gpu}},
      .other_display_devices = {pci},
      .pci_listed = true,
      .cdi_specs = {{.path = "/etc/cdi/nvidia.yaml",
                     .kind = "nvidia.com/gpu",
                     .driver_versions = {"535.104.05"},
                     .libraries = 12,
                     .missing = {"/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05"}}}};
  s.gpus = {{pci, nvml_gpu}};
  s.toolkit = {.toolkits = {{.root = "/usr/local/cuda-12.2",
                             .found_by = {{ToolkitFinder::conda_environment, "/opt/conda"}},
                             .layout = "nvidia",
                             .version = "12.2.140",
                             .witnesses = {{"version.json", "12.2.140"}},
                             .nvcc = "/usr/local/cuda-12.2/bin/nvcc",
                             .bin_dir = "/usr/local/cuda-12.2/bin",
                             .lib_dir = "/usr/local/cuda-12.2/lib64",
                             .components = {{"cublas", "12.2.5.6", "/usr/local/cuda-12.2/lib64/libcublas.so.12"}},
                             .nvcc_archs = {"sm_90"},
                             .missing = {"libcudnn"}}},
               .cuda_link_target = "/etc/alternatives/cuda",
               .cuda_link_resolved = "/usr/local/cuda-12.2",
               .path_nvcc = "/usr/local/cuda/bin/nvcc",
               .path_nvcc_real = "/usr/local/cuda-12.2/bin/nvcc",
               .cuda_home = "/usr/local/cuda",
               .cuda_path = "/opt/cuda",
               .cuda_root = "/usr/local/cuda-12.2",
               .path = {"/usr/local/cuda/bin", "/usr/bin"},
               .ld_library_path = {"/usr/local/cuda/lib64"},
               .ld_so_conf_dirs = {"/usr/local/cuda/targets/x86_64-linux/lib (/etc/ld.so.conf.d/cuda.conf)"},
               .global_settings = {{"/etc/profile.d/cuda.sh", 2, "export PATH=/usr/local/cuda/bin:$PATH"}},
               .cudart_picks = {{"libcudart.so.12", "/usr/local/cuda-12.2/lib64/libcudart.so.12", "ld.so.cache"}}};
  s.python = {
      .path_python = "/home/ana/venv/bin/python3",
      .path_python_env = "/home/ana/venv",
      .envs = {{.prefix = "/home/ana/venv",
                .interpreter = "/home/ana/venv/bin/python3",
                .version = "3.11",
                .kind = "venv",
                .found_by = {"VIRTUAL_ENV"},
                .site_packages = {"/home/ana/venv/lib/python3.11/site-packages", "/usr/lib/python3/dist-packages"},
                .frameworks = {{.name = "torch",
                                .version = "2.5.1+cu124",
                                .cuda = "12.4",
                                .hip = "6.2",
                                .cudnn = "90100",
                                .location = "/home/ana/venv/lib/python3.11/site-packages/torch",
                                .source = "torch/version.py",
                                .gpu_library = "torch/lib/libtorch_cuda.so",
                                .cuda_unknown = true,
                                .libraries = {{"libcublas.so.12", "/x/libcublas.so.12", "DT_RUNPATH", "12.4.5.8",
                                               "/x/nvidia/cublas/lib/libcublas.so.12"}},
                                .missing = {"libcudnn.so.9"},
                                .dlopened = {"libcudnn.so.9"},
                                .opened = {{"libcudnn.so.9", "torch/lib/libtorch_cuda.so", "/x/libcudnn.so.9",
                                            "DT_RUNPATH"}},
                                .missing_versions = {"GLIBCXX_3.4.32 (in /usr/lib/libstdc++.so.6)"},
                                .sm_archs = {"sm_90"},
                                .ptx_archs = {"compute_90"},
                                .requires_nvidia = {"nvidia-cudnn-cu12==9.1.0.70"},
                                .error = "truncated ELF header",
                                .installer = "uv",
                                .inherited = true,
                                .companions = {{"jax_cuda12_plugin", "0.4.31", "jax_cuda12_plugin-0.4.31.dist-info"}},
                                .minimum_jaxlib = "0.4.30",
                                .deep = snapshot::DeepView{.status = "crashed",
                                                           .signal = 11,
                                                           .exit_code = 3,
                                                           .seconds = 1.5,
                                                           .message = "killed by SIGSEGV",
                                                           .last_step = "import torch",
                                                           .run_as = "ana",
                                                           .stderr_tail = "Segmentation fault",
                                                           .imported = true,
                                                           .error = "ImportError: libcudnn.so.9",
                                                           .version = "2.5.1+cu124",
                                                           .cuda = "12.4",
                                                           .available = 1,
                                                           .device_count = 1,
                                                           .devices = {"NVIDIA H100"},
                                                           .arch_list = {"sm_90"},
                                                           .matmul = "ok",
                                                           .ld_preload = "/opt/libcudart.so.12",
                                                           .preloaded = {"tensorflow"},
                                                           .mapped = {"/opt/libcudart.so.12"},
                                                           .libraries = {{"libcudart.so.12", "/x/libcudart.so.12",
                                                                          "/x/libcudart.so.12.4.127",
                                                                          "/opt/libcudart.so.12"}},
                                                           .extra = {"/opt/libnccl.so.2"}}}},
                .nvidia_packages = {{"nvidia-cublas-cu12", "12.4.5.8"}},
                .libcuda_users = {{"triton", "3.1.0", "triton-3.1.0.dist-info"}},
                .system_site_packages = true,
                .base_prefix = "/usr",
                .conda_meta = true}},
      .lists_cut = {{"/opt/conda/envs", 20000, 10000}}};
  s.runtime = {.ran = true,
               .not_run_reason = "--no-runtime",
               .cuda_visible_devices = "0",
               .driver_api = {.library = "/usr/lib/libcuda.so.1",
                              .outcome = outcome,
                              .driver_version = 12020,
                              .init = {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "driver mismatch"},
                              .device_count_call = {100, "CUDA_ERROR_NO_DEVICE", "no device"},
                              .device_count = 2,
                              .devices = {{.index = 1,
                                           .name = "NVIDIA H100 80GB HBM3",
                                           .compute_capability = "9.0",
                                           .memory_total_bytes = 85520809984ull,
                                           .multiprocessors = 132,
                                           .clock_mhz = 1980,
                                           .memory_clock_mhz = 2619,
                                           .memory_bus_width_bits = 5120,
                                           .pci_bus_id = "0000:1b:00.0",
                                           .context = failed}}},
               .cudarts = {{.library = "/usr/local/cuda-12.2/lib64/libcudart.so.12",
                            .origin = "toolkit /usr/local/cuda-12.2",
                            .driver_library = "/usr/lib/libcuda.so.1",
                            .outcome = outcome,
                            .runtime_version = 12020,
                            .driver_version = 12020,
                            .device_count_call = {35, "cudaErrorInsufficientDriver", "driver too old"},
                            .device_count = 2,
                            .set_device = failed}},
               .compute = {{.device = 1,
                            .cudart = "/usr/local/cuda-12.2/lib64/libcudart.so.12",
                            .cublas = "/usr/local/cuda-12.2/lib64/libcublas.so.12",
                            .outcome = outcome,
                            .allocation = {2, "cudaErrorMemoryAllocation", "out of memory"},
                            .copies = {{"h2d_pinned", 1ull << 28, 24.5, true}},
                            .copies_timed_alone = false,
                            .gemms = {{.dtype = "bf16",
                                       .m = 64,
                                       .n = 65,
                                       .k = 66,
                                       .max_abs_error = 0.0625,
                                       .tolerance = 0.125,
                                       .passed = true,
                                       .tflops = 700.5,
                                       .throughput_size = 8192,
                                       .status = failed}}}}};
  s.settings = {.settings = {{"CUBLAS_WORKSPACE_CONFIG", ":4096:8", "env", "/home/a/.bashrc", 12, "shell", true, "sh",
                              true, "CUBLAS_WORKSPACE_CONFIG=:4096:8"}},
                .files_read = {"/home/a/.bashrc"},
                .module_params = {{"i915.enable_rc6", true, true, "0", "/sys/module/i915/parameters/enable_rc6"}},
                .allocator_keys = {{"torch",
                                    "/usr/lib/python3/dist-packages/torch",
                                    {"/usr/lib/python3/dist-packages/torch/lib/libc10.so"},
                                    {"max_split_size_mb"},
                                    {"max_split_size"}}}};
  s.unreadable = {{"/proc/modules", "Permission denied"}};
  return s;
}

// Keys whose default is true or non-zero, so the value set away from the default is falsy.
const std::set<std::string> k_falsy_on_purpose = {"copies_timed_alone"};

// Appends to bad the path of every value in j that is null, "", 0, false, [] or {}.
void find_defaults(const nlohmann::json& j, const std::string& path, std::vector<std::string>& bad) {
  const auto key = path.substr(path.rfind('/') + 1);
  if (k_falsy_on_purpose.count(key)) return;
  const bool empty_value = j.is_null() || (j.is_string() && j.get<std::string>().empty()) ||
                           (j.is_number() && j.get<double>() == 0) || (j.is_boolean() && !j.get<bool>()) ||
                           ((j.is_array() || j.is_object()) && j.empty());
  if (empty_value) bad.push_back(path.empty() ? "/" : path);
  if (j.is_object())
    for (const auto& [k, v] : j.items()) find_defaults(v, path + "/" + k, bad);
  if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) find_defaults(j[i], path + "/" + std::to_string(i), bad);
}

}  // namespace

TEST(SnapshotJson, RoundTripsEveryField) {
  const auto s = populated();
  // Through text, as a reader of `cudoctor --json` gets it.
  const auto back = snapshot_from_json_text(nlohmann::json(s).dump());
  ASSERT_TRUE(back) << back.error();
  // Layer by layer, so a failure names the layer whose mapping lost a field.
  EXPECT_TRUE(back->host == s.host) << "host";
  EXPECT_TRUE(back->driver == s.driver) << "driver";
  EXPECT_TRUE(back->gpus == s.gpus) << "gpus";
  EXPECT_TRUE(back->toolkit == s.toolkit) << "toolkit";
  EXPECT_TRUE(back->python == s.python) << "python";
  EXPECT_TRUE(back->runtime == s.runtime) << "runtime";
  EXPECT_TRUE(back->settings == s.settings) << "settings";
  EXPECT_TRUE(back->unreadable == s.unreadable) << "unreadable";
  EXPECT_TRUE(*back == s) << "the whole snapshot";
}

// Each key in the populated snapshot's JSON holds a value away from its default: populated()
// really sets every field, so the round trip above proves every field survives.
TEST(SnapshotJson, AllKeysHoldNonDefaults) {
  std::vector<std::string> bad;
  find_defaults(nlohmann::json(populated()), "", bad);
  std::string list;
  for (const auto& p : bad) list += p + "\n";
  EXPECT_TRUE(bad.empty()) << "populated() leaves these at their defaults:\n" << list;
}

TEST(SnapshotJson, AbsentNvmlIsNull) {
  Snapshot s;
  s.gpus = {{PciDevice{.address = "0000:01:00.0"}, std::nullopt}};
  const nlohmann::json j = s;
  EXPECT_EQ(j["gpus"][0]["nvml"], nullptr);
  EXPECT_EQ(j.get<Snapshot>(), s);
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
  EXPECT_EQ(j["driver"]["libraries"][0]["candidates"][0],
            (nlohmann::json{{"path", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"},
                            {"state", "wrong_class"},
                            {"target", "libnvidia-ml.so.535.104.05"},
                            {"reason", "wrong ELF class: ELFCLASS32"}}));
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
