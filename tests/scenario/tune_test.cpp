// `cudoctor tune` (issue 15): the settings copied from articles and forums, where each is set,
// what it really does and the verdict with its source; the same warnings in check's "Tuning".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixture_root.hpp"
#include "machines.hpp"
#include "run_cli.hpp"
#include "scenario.hpp"
#include "venvs.hpp"

namespace cudoctor::testing {
namespace {

struct Tuned {
  CliResult run;
  nlohmann::json j;
  std::vector<nlohmann::json> with(const std::string& id, const std::string& setting) const {
    std::vector<nlohmann::json> out;
    for (const auto& f : j["findings"])
      if (f["id"] == id && f["title"].get<std::string>().starts_with(setting)) out.push_back(f);
    return out;
  }
  // The one finding of this id whose title starts with the setting; every key empty when none.
  nlohmann::json one(const std::string& id, const std::string& setting) const {
    const auto all = with(id, setting);
    EXPECT_EQ(all.size(), 1u) << id << " " << setting << "\n" << j["findings"].dump(1);
    if (!all.empty()) return all.front();
    return {{"id", ""},
            {"layer", ""},
            {"severity", ""},
            {"title", ""},
            {"detail", ""},
            {"evidence", nlohmann::json::array()},
            {"fix", {{"text", ""}, {"commands", nlohmann::json::array()}}}};
  }
};

Tuned tune(const FixtureRoot& r, const std::map<std::string, std::string>& env) {
  Tuned t;
  t.run = run_cudoctor({"tune", "--root", r.path().string(), "--json"}, env);
  try {
    t.j = nlohmann::json::parse(t.run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << t.run.out << t.run.err;
  }
  return t;
}

// A library standing in for torch's libc10_cuda.so: the option names its allocator's parser
// compares each PYTORCH_CUDA_ALLOC_CONF key with, as string literals.
void add_allocator_parser(FixtureRoot& r, const std::string& torch_lib, const std::vector<std::string>& keys) {
  std::string c = "const char* const allocator_keys[] = {";
  for (const auto& k : keys) c += "\"" + k + "\", ";
  c += "0};\n";
  std::ofstream(r.host("/c10.c")) << c;
  run_sh("cc -shared -fPIC '" + r.host("/c10.c").string() + "' -o '" + r.host(torch_lib + "/libc10_cuda.so").string() +
         "'");
}

const std::vector<std::string> k_keys_before_graph_capture = {"max_split_size_mb",
                                                              "max_non_split_rounding_mb",
                                                              "garbage_collection_threshold",
                                                              "roundup_power2_divisions",
                                                              "expandable_segments",
                                                              "release_lock_on_cudamalloc",
                                                              "backend",
                                                              "pinned_use_cuda_host_register",
                                                              "pinned_num_register_threads"};

// An Ubuntu laptop-style machine with a CUDA torch venv and the source article's settings in
// the user's ~/.bashrc and the boot loader's command line.
void build_article_machine(FixtureRoot& r) {
  add_ubuntu_2204(r);
  build_venv(r, "12.4");
  add_allocator_parser(r, "/home/u/venv/lib/python3.11/site-packages/torch/lib", k_keys_before_graph_capture);
  r.file("/home/u/.bashrc",
         "# ~/.bashrc\n"
         "export CUBLAS_TENSOR_OP_MATH_FP16=1\n"
         "export CUBLAS_WORKSPACE_CONFIG=:4096:8\n"
         "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,garbage_collection_threshold:0.8\n");
  r.file("/etc/default/grub",
         "GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash i915.enable_rc6=0\"\n");
  r.file("/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.5.0-35-generic root=UUID=1 ro quiet splash i915.enable_rc6=0\n");
  // The running i915 has parameters, but no enable_rc6.
  r.file("/sys/module/i915/parameters/enable_guc", "-1\n");
  r.file("/usr/sbin/update-grub", "#!/bin/sh\n", 0755);
}

TEST(ScenarioTune, ArticleSettingsEachGetTheirVerdictSourceAndLine) {
  FixtureRoot r;
  build_article_machine(r);
  auto env = k_activated_venv;
  env["HOME"] = "/home/u";
  const auto t = tune(r, env);
  EXPECT_EQ(t.run.exit_code, 1) << "settings to change";
  ASSERT_EQ(t.j["settings"]["allocator_keys"].size(), 1u) << "the venv's torch was searched";

  const auto fp16 = t.one("tune-not-read", "CUBLAS_TENSOR_OP_MATH_FP16=1");
  EXPECT_EQ(fp16["severity"], "warn");
  EXPECT_TRUE(contains(joined_evidence(fp16), "CUBLAS_TENSOR_OP_MATH_FP16=1: /home/u/.bashrc:2 (shell start-up file)"));
  EXPECT_TRUE(contains(fp16["detail"], "cuBLAS has no such variable")) << fp16["detail"];
  EXPECT_TRUE(contains(fp16["detail"], "NVIDIA_TF32_OVERRIDE"));
  EXPECT_TRUE(contains(fp16["detail"], "https://"));
  EXPECT_EQ(fp16["fix"]["commands"], nlohmann::json({"sed --follow-symlinks -i '2s/^/# /' /home/u/.bashrc"}));

  const auto ws = t.one("tune-setting", "CUBLAS_WORKSPACE_CONFIG=:4096:8");
  EXPECT_TRUE(contains(ws["title"], "32 MiB of cuBLAS workspace")) << ws["title"];
  EXPECT_TRUE(contains(ws["detail"], "8 × 4096 KiB"));
  EXPECT_TRUE(contains(ws["detail"], "torch.use_deterministic_algorithms(True) accepts this value"));
  EXPECT_TRUE(contains(ws["detail"], "nothing to do with Tensor Cores")) << "the article's claim corrected";
  EXPECT_TRUE(contains(ws["detail"], "https://docs.nvidia.com/cuda/cublas/index.html#results-reproducibility"));
  EXPECT_TRUE(contains(joined_evidence(ws), "/home/u/.bashrc:3"));

  const auto alloc =
      t.one("tune-setting", "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,garbage_collection_threshold:0.8");
  EXPECT_TRUE(contains(alloc["detail"], "max_split_size_mb: blocks larger than this many MB are never split"))
      << alloc["detail"];
  EXPECT_TRUE(contains(alloc["detail"], "garbage_collection_threshold: once the memory PyTorch holds passes"));
  EXPECT_TRUE(contains(joined_evidence(alloc), "/home/u/.bashrc:4"));

  const auto rc6 = t.one("tune-kernel-param-no-effect", "i915.enable_rc6=0");
  EXPECT_EQ(rc6["layer"], "L1");
  EXPECT_TRUE(contains(rc6["title"], "the running i915 has no such parameter")) << rc6["title"];
  const auto ev = joined_evidence(rc6);
  EXPECT_TRUE(contains(ev, "i915.enable_rc6=0: /etc/default/grub:3 (boot loader configuration")) << ev;
  EXPECT_TRUE(contains(ev, "i915.enable_rc6=0: /proc/cmdline:1 (the running kernel's command line)")) << ev;
  EXPECT_TRUE(contains(rc6["detail"], "nothing to do with the NVIDIA GPU or its PCIe link"));
  ASSERT_EQ(rc6["fix"]["commands"].size(), 2u) << rc6["fix"].dump();
  EXPECT_EQ(rc6["fix"]["commands"][1], "update-grub");
  // The printed edit, run on the fixture's file: the parameter goes, the line stays valid shell.
  auto edit = rc6["fix"]["commands"][0].get<std::string>();
  ASSERT_TRUE(edit.ends_with(" /etc/default/grub")) << edit;
  run_sh(edit.substr(0, edit.size() - std::string("/etc/default/grub").size()) + r.host("/etc/default/grub").string());
  const auto grub = shell_output("cat '" + r.host("/etc/default/grub").string() + "'");
  EXPECT_TRUE(contains(grub, "GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash\"\n")) << grub;
  EXPECT_TRUE(bash_parses(grub));

  // What the files it read were, and nothing else was judged.
  EXPECT_TRUE(contains(t.j["settings"]["files_read"].dump(), "/home/u/.bashrc"));
}

TEST(ScenarioTune, MisspeltAllocatorKeyAKeyThisTorchLacksAndNcclWordsAreCaught) {
  FixtureRoot r;
  build_article_machine(r);
  auto env = k_activated_venv;
  env.insert({{"HOME", "/home/u"},
              {"PYTORCH_CUDA_ALLOC_CONF",
               "max_split_size:128,expandable_segments:true,"
               "graph_capture_record_stream_reuse:True"},
              {"NCCL_P2P_DISABLE", "true"},
              {"TF_FORCE_GPU_ALLOW_GROWTH", "True"}});
  const auto t = tune(r, env);
  const auto alloc = t.one("tune-alloc-conf-invalid", "PYTORCH_CUDA_ALLOC_CONF=max_split_size:128");
  const std::string d = alloc["detail"];
  EXPECT_TRUE(contains(d, "max_split_size is not an option this torch knows")) << d;
  EXPECT_TRUE(contains(d, "did you mean max_split_size_mb?")) << d;
  EXPECT_TRUE(contains(d, "expandable_segments takes exactly True or False")) << d;
  EXPECT_TRUE(contains(d, "graph_capture_record_stream_reuse is not an option this torch knows")) << "version-exact";
  EXPECT_TRUE(contains(joined_evidence(alloc), "environment (this shell's environment)"));
  EXPECT_EQ(alloc["fix"]["commands"], nlohmann::json({"unset PYTORCH_CUDA_ALLOC_CONF"}));

  const auto p2p = t.one("tune-invalid-value", "NCCL_P2P_DISABLE=true");
  EXPECT_TRUE(contains(p2p["detail"], "\"true\" reads as 0")) << p2p["detail"];
  EXPECT_TRUE(contains(p2p["detail"], "https://github.com/NVIDIA/nccl/blob/master/src/misc/param.cc"));
  EXPECT_EQ(p2p["fix"]["commands"], nlohmann::json({"unset NCCL_P2P_DISABLE"}))
      << "not corrected to 1, which would turn peer-to-peer off";

  const auto growth = t.one("tune-invalid-value", "TF_FORCE_GPU_ALLOW_GROWTH=True");
  EXPECT_TRUE(contains(growth["detail"], "only the lower-case words true and false"));
  EXPECT_EQ(growth["fix"]["commands"], nlohmann::json({"export TF_FORCE_GPU_ALLOW_GROWTH=true"}));
}

TEST(ScenarioTune, ServicesModprobeAndCondaActivationAreRead) {
  FixtureRoot r;
  add_debian_12(r);
  add_gpu(r, 0x2330, "550.54.14");  // H100 SXM
  r.file(
      "/etc/systemd/system/trainer.service",
      "[Service]\nEnvironment=CUDA_LAUNCH_BLOCKING=1 \"NCCL_IB_DISABLE=1\"\nExecStartPre=/usr/bin/nvidia-smi -pm 1\n");
  r.file("/etc/systemd/system/nccl.service", "[Service]\nExecStart=/bin/true\n");
  r.file("/etc/systemd/system/nccl.service.d/shm.conf", "Environment=NCCL_SHM_DISABLE=1\n");
  r.file("/etc/modprobe.d/nvidia-gsp.conf", "options nvidia NVreg_EnableGpuFirmware=1\n");
  r.file("/proc/driver/nvidia/params", "ResmanDebugLevel: 4294967295\nEnableGpuFirmware: 18\n");
  r.file("/sys/module/nvidia/initstate", "live\n");
  const std::string env = "/opt/conda/envs/ml";
  r.file(env + "/conda-meta/python-3.11.10-h9e4cc4f_3_cpython.json", "{}");
  r.file(env + "/conda-meta/state", R"({"env_vars": {"TF_FORCE_GPU_ALLOW_GROWTH": "True", "PATH_UNRELATED": "x"}})");
  r.file(env + "/bin/python3.11",
         "\x7f"
         "ELF",
         0755)
      .link(env + "/bin/python3", "python3.11");
  r.file(env + "/etc/conda/activate.d/tf.sh", "export TF_GPU_ALLOCATOR=cuda_malloc\n");
  r.file("/opt/conda/bin/conda", "#!/bin/sh\n", 0755);
  r.file("/usr/bin/systemctl", "", 0755);
  r.file("/usr/sbin/update-initramfs", "", 0755);
  const auto t = tune(r, {{"HOME", "/root"}, {"PATH", "/opt/conda/bin:/usr/bin:/bin"}});

  const auto blocking = t.one("tune-costs-speed", "CUDA_LAUNCH_BLOCKING=1");
  EXPECT_TRUE(contains(joined_evidence(blocking), "/etc/systemd/system/trainer.service:2 (systemd unit)"));
  // Its line sets two variables: changed by hand, and the check shows the line.
  EXPECT_TRUE(blocking["fix"]["commands"].empty()) << blocking["fix"].dump();
  EXPECT_TRUE(contains(blocking["fix"]["text"],
                       "by hand where the line does more than set it: "
                       "/etc/systemd/system/trainer.service line 2"));
  EXPECT_EQ(blocking["fix"]["checks"], nlohmann::json({"sed -n 2p /etc/systemd/system/trainer.service"}));
  const auto shm = t.one("tune-costs-speed", "NCCL_SHM_DISABLE=1");
  EXPECT_EQ(shm["fix"]["commands"],
            nlohmann::json({"sed --follow-symlinks -i '1s/^/# /' /etc/systemd/system/nccl.service.d/"
                            "shm.conf",
                            "systemctl daemon-reload"}));
  EXPECT_TRUE(t.one("tune-costs-speed", "NCCL_IB_DISABLE=1")["detail"].get<std::string>().find("TCP sockets") !=
              std::string::npos);

  const auto gsp = t.one("tune-kernel-param", "nvidia.NVreg_EnableGpuFirmware=1");
  EXPECT_TRUE(contains(gsp["detail"], "has nothing to do with link width")) << gsp["detail"];
  EXPECT_TRUE(contains(joined_evidence(gsp), "/proc/driver/nvidia/params: 18 (active value)"));
  EXPECT_TRUE(contains(joined_evidence(gsp), "/etc/modprobe.d/nvidia-gsp.conf:1"));

  const auto pm = t.one("tune-setting", "nvidia-smi -pm 1");
  EXPECT_TRUE(contains(pm["detail"], "nvidia-persistenced"));

  const auto alloc = t.one("tune-costs-speed", "TF_GPU_ALLOCATOR=cuda_malloc");
  EXPECT_TRUE(contains(joined_evidence(alloc),
                       "/opt/conda/envs/ml/etc/conda/activate.d/tf.sh:1 (conda environment "
                       "activation)"))
      << joined_evidence(alloc);
  // `conda env config vars set` keeps its variables in conda-meta/state; the fix goes through conda.
  const auto growth = t.one("tune-invalid-value", "TF_FORCE_GPU_ALLOW_GROWTH=True");
  EXPECT_EQ(growth["fix"]["commands"],
            nlohmann::json({"conda env config vars set TF_FORCE_GPU_ALLOW_GROWTH=true -p /opt/conda/envs/ml"}));
}

// GPUs of two models chosen by index: CUDA's order is not nvidia-smi's unless told.
TEST(ScenarioTune, MixedGpusChosenByIndexNeedPciBusOrder) {
  FixtureRoot r;
  add_ubuntu_2204(r);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2204, .class_code = 0x030000, .driver = "nvidia"});  // RTX 3090
  add_pci(r, {.address = "0000:02:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});  // RTX 4090
  const auto t = tune(r, {{"CUDA_VISIBLE_DEVICES", "1"}});
  const auto f = t.one("tune-device-order", "CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(f["fix"]["commands"], nlohmann::json({"export CUDA_DEVICE_ORDER=PCI_BUS_ID"}));
  EXPECT_TRUE(contains(joined_evidence(f), "at 0000:02:00.0")) << joined_evidence(f);
  const auto ordered = tune(r, {{"CUDA_VISIBLE_DEVICES", "1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
  EXPECT_TRUE(ordered.with("tune-device-order", "").empty());
  const auto by_uuid = tune(r, {{"CUDA_VISIBLE_DEVICES", "GPU-8f1a2b3c"}});
  EXPECT_TRUE(by_uuid.with("tune-device-order", "").empty());
}

// Start-up files that are no files: a FIFO, a file past the cap, a line of garbage and one of
// unbalanced quotes. tune says what it could not read and judges the rest.
TEST(ScenarioTune, HostileStartupFilesAreSaidNotReadNeverHang) {
  FixtureRoot r;
  add_debian_12(r);
  r.fifo("/home/u/.bashrc");
  r.file("/etc/environment", std::string(2 << 20, 'A'));
  r.file("/home/u/.profile", std::string("export CUDA_LAUNCH_BLOCKING='1\n\x01\xff\xfe garbage\n") +
                                 "export NCCL_P2P_DISABLE=1\n" + std::string(300000, 'x') + "\n");
  const auto t = tune(r, {{"HOME", "/home/u"}});
  EXPECT_EQ(t.run.exit_code, 1);
  const auto unreadable = t.j["unreadable"].dump();
  EXPECT_TRUE(contains(unreadable, "/home/u/.bashrc")) << unreadable;
  EXPECT_TRUE(contains(unreadable, "/etc/environment")) << unreadable;
  EXPECT_TRUE(t.with("tune-costs-speed", "CUDA_LAUNCH_BLOCKING").empty()) << "an unterminated quote sets nothing";
  EXPECT_TRUE(contains(joined_evidence(t.one("tune-costs-speed", "NCCL_P2P_DISABLE=1")), "/home/u/.profile:3"));
  const auto text = run_cudoctor({"tune", "--root", r.path().string(), "--color", "never"}, {{"HOME", "/home/u"}});
  EXPECT_TRUE(contains(text.out, "! could not read /home/u/.bashrc")) << text.out;
}

// check shows only the tuning warnings, after the layers, and they never make a break.
TEST(ScenarioTune, CheckShowsTuningWarningsUnderTheirOwnHeading) {
  FixtureRoot r;
  build_article_machine(r);
  auto env = k_activated_venv;
  env.insert({{"HOME", "/home/u"}, {"CUDA_LAUNCH_BLOCKING", "1"}});
  const auto c = check_root(r, {}, env);
  EXPECT_TRUE(c.has("tune-costs-speed"));
  EXPECT_TRUE(c.has("tune-not-read"));
  EXPECT_FALSE(c.has("tune-setting")) << "information stays in `cudoctor tune`";
  EXPECT_TRUE(c.finding("tune-costs-speed")["follows_from"].is_null());
  EXPECT_NE(c.report["verdict"]["break_finding"], "tune-costs-speed");
  const auto& text = c.text_run.out;
  const auto heading = text.find("\nTuning\n");
  ASSERT_NE(heading, std::string::npos) << text;
  EXPECT_GT(text.find("CUDA_LAUNCH_BLOCKING=1: costs speed"), heading);
  EXPECT_GT(heading, text.find("L3 framework"));
}

// On this machine: Debian's CPU-only torch has no CUDA allocator, and the printed fix works.
TEST(ScenarioTune, LiveCpuOnlyTorchAndAFixThatWorks) {
  if (!std::filesystem::exists("/usr/lib/python3/dist-packages/torch/version.py"))
    GTEST_SKIP() << "python3-torch is not installed (scripts/install-deps.sh --test installs it)";
  const auto home = std::filesystem::path(::testing::TempDir()) / "tune-home";
  std::filesystem::create_directories(home);
  std::ofstream(home / ".bashrc") << "alias ll='ls -l'\nexport CUDA_CACHE_DISABLE=1\n";
  const auto run = run_cudoctor({"tune", "--json", "--no-runtime"},
                                {{"HOME", home.string()}, {"PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128"}});
  const auto j = nlohmann::json::parse(run.out);
  nlohmann::json cpu, cache;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "tune-no-effect") cpu = f;
    if (f["id"] == "tune-costs-speed" && contains(f["title"], "CUDA_CACHE_DISABLE")) cache = f;
  }
  ASSERT_FALSE(cpu.is_null()) << run.out;
  EXPECT_TRUE(contains(joined_evidence(cpu), "/usr/lib/python3/dist-packages/torch: a CPU-only build"));
  ASSERT_FALSE(cache.is_null()) << run.out;
  ASSERT_EQ(cache["fix"]["commands"].size(), 1u);
  run_sh(cache["fix"]["commands"][0].get<std::string>());
  std::ifstream in(home / ".bashrc");
  const std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, "alias ll='ls -l'\n# export CUDA_CACHE_DISABLE=1\n");
  EXPECT_TRUE(bash_parses(after));
}

}  // namespace
}  // namespace cudoctor::testing
