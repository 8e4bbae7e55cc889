// The command-line and JSON contract of docs (design.md): keys, types, exit codes, formats,
// colour, redaction, and the renderers' golden output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "golden.hpp"
#include "machines.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

void build_vm(FixtureRoot& r) {
  add_kvm_guest_without_gpu(r, "ci-runner-3");
}

std::string strip_root(std::string s, const FixtureRoot& r) {
  const auto p = r.path().string();
  for (auto pos = s.find(p); pos != std::string::npos; pos = s.find(p)) s.replace(pos, p.size(), "<root>");
  return s;
}

TEST(ScenarioContract, JsonHasTheContractKeys) {
  FixtureRoot r;
  build_vm(r);
  const auto c = check_root(r);
  const auto& j = c.report;
  EXPECT_TRUE(j["schema"].is_number_integer());
  EXPECT_TRUE(j["tool_version"].is_string());
  for (const char* k : {"host", "driver"}) EXPECT_TRUE(j[k].is_object()) << k;
  for (const char* k : {"gpus", "toolkits", "pythons", "findings"}) EXPECT_TRUE(j[k].is_array()) << k;
  EXPECT_TRUE(j.contains("runtime"));
  for (const auto& f : j["findings"]) {
    EXPECT_TRUE(f["id"].is_string());
    EXPECT_TRUE(f["title"].is_string());
    EXPECT_TRUE(f["detail"].is_string());
    EXPECT_TRUE(f["evidence"].is_array());
    EXPECT_TRUE(f["fix"]["text"].is_string());
    EXPECT_TRUE(f["fix"]["commands"].is_array());
    const auto layer = f["layer"].get<std::string>();
    EXPECT_TRUE(layer.size() == 2 && layer[0] == 'L' && layer[1] >= '0' && layer[1] <= '5') << layer;
    const auto sev = f["severity"].get<std::string>();
    EXPECT_TRUE(sev == "ok" || sev == "info" || sev == "warn" || sev == "error") << sev;
  }
  EXPECT_FALSE(j["verdict"]["healthy"].get<bool>());
  EXPECT_EQ(j["verdict"]["break_layer"], "L1");
  EXPECT_TRUE(j["verdict"]["summary"].is_string());
}

TEST(ScenarioContract, FormatsAndColour) {
  FixtureRoot r;
  build_vm(r);
  const auto root = r.path().string();
  const auto md = run_cudoctor({"--root", root, "--runtime", "--format", "markdown"});
  EXPECT_EQ(md.exit_code, 1);
  EXPECT_TRUE(contains(md.out, "**Verdict:** ❌ Broken at L1 driver: No NVIDIA GPU on the PCI bus."));
  EXPECT_TRUE(contains(md.out, "<details><summary>All facts (JSON)</summary>"));
  const auto as_json = run_cudoctor({"--root", root, "--runtime", "--format", "json"});
  EXPECT_TRUE(nlohmann::json::accept(as_json.out));
  // Colour only when asked or on a terminal; NO_COLOR wins over auto.
  EXPECT_FALSE(contains(run_cudoctor({"--root", root, "--runtime"}).out, "\033["));
  EXPECT_TRUE(contains(run_cudoctor({"--root", root, "--runtime", "--color", "always"}).out, "\033[31m"));
  EXPECT_FALSE(
      contains(run_cudoctor({"--root", root, "--runtime", "--color", "auto"}, {{"NO_COLOR", "1"}}).out, "\033["));
  // -v shows the evidence of ok and info lines too.
  const auto plain = run_cudoctor({"--root", root, "--runtime"});
  const auto verbose = run_cudoctor({"--root", root, "--runtime", "-v"});
  EXPECT_FALSE(contains(plain.out, "/etc/os-release: ID=debian"));
  EXPECT_TRUE(contains(verbose.out, "/etc/os-release: ID=debian VERSION_ID=12"));
  EXPECT_EQ(run_cudoctor({"check", "--root", root, "--runtime", "--json"}).out, as_json.out)
      << "check is the default command";
}

TEST(ScenarioContract, RedactHidesHostAndUser) {
  FixtureRoot r;
  build_vm(r);
  const auto out = run_cudoctor({"--root", r.path().string(), "--runtime", "--json", "--redact"}).out;
  EXPECT_FALSE(contains(out, "ci-runner-3"));
  EXPECT_TRUE(contains(out, "\"hostname\": \"<host>\""));
}

TEST(ScenarioContract, GoldenTextVmWithoutGpu) {
  FixtureRoot r;
  build_vm(r);
  const auto c = run_cudoctor({"--root", r.path().string(), "--runtime", "--color", "never"});
  const auto msg = check_golden("vm-no-gpu.txt", strip_root(c.out, r));
  EXPECT_TRUE(msg.empty()) << msg;
}

TEST(ScenarioContract, GoldenMarkdownVmWithoutGpu) {
  FixtureRoot r;
  build_vm(r);
  // SOURCE_DATE_EPOCH pins the "Generated" line's time (2025-12-02 00:00 UTC).
  const auto c = run_cudoctor({"--root", r.path().string(), "--runtime", "--format", "markdown"},
                              {{"SOURCE_DATE_EPOCH", "1764633600"}});
  // The facts block holds timings and paths of this run; the golden file pins the rest.
  auto out = strip_root(c.out, r);
  out = out.substr(0, out.find("<details><summary>All facts"));
  const auto msg = check_golden("vm-no-gpu.md", out);
  EXPECT_TRUE(msg.empty()) << msg;
}

TEST(ScenarioContract, GoldenTextDriverMismatch) {
  FixtureRoot r;
  add_ubuntu_2204(r, "6.5.0-35-generic", "gpu-box");
  add_cpuinfo(r, false);
  add_pci(r, {.address = "0000:01:00.0", .device = 0x2684, .class_code = 0x030000, .driver = "nvidia"});
  add_proc_modules(r, {"nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia"});
  add_nvidia_kernel_version(r, "535.104.05");
  add_driver_libraries(r, "535.129.03", nvml_sim_library());
  r.file("/usr/bin/nvidia-modprobe", "", 04755);
  const auto c =
      run_cudoctor({"--root", r.path().string(), "--runtime", "--color", "never"}, {{"NVML_SIM_MODE", "mismatch"}});
  auto out = strip_root(c.out, r);
  const auto msg = check_golden("driver-mismatch.txt", out);
  EXPECT_TRUE(msg.empty()) << msg;
}

TEST(ScenarioContract, LiveMachineAgreesWithSysfs) {
  // Whatever this machine is, the report's GPU list is what sysfs shows.
  namespace fs = std::filesystem;
  std::size_t nvidia = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::ifstream v(e.path() / "vendor"), k(e.path() / "class");
    std::string vendor, cls;
    v >> vendor;
    k >> cls;
    if (vendor == "0x10de" && cls.rfind("0x03", 0) == 0) ++nvidia;
  }
  const auto run = run_cudoctor({"--json"});
  const auto j = nlohmann::json::parse(run.out);
  std::size_t with_pci = 0;
  for (const auto& g : j["gpus"]) with_pci += !g["pci"]["address"].get<std::string>().empty();
  EXPECT_EQ(with_pci, nvidia);
  bool no_gpu = false;
  for (const auto& f : j["findings"]) no_gpu = no_gpu || f["id"] == "no-nvidia-gpu";
  if (nvidia == 0 && j["host"]["wsl"]["kind"] == "") {
    EXPECT_TRUE(no_gpu);
    EXPECT_EQ(run.exit_code, 1);
  }
}

}  // namespace
}  // namespace cudoctor::testing
