#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cudoctor/runtime/bus_id.hpp"
#include "cudoctor/runtime/child.hpp"
#include "cudoctor/runtime/library_linux.hpp"
#include "cudoctor/runtime/nvml_child.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::runtime {
namespace {

// NVML ABI as declared in NVIDIA's nvml.h (return codes are ints; handles opaque).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlPciInfo_t {  // nvmlPciInfo_st, v3 layout (NVML 11+)
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr int k_nvml_temperature_gpu = 0;
constexpr int k_nvml_clock_graphics = 0;
constexpr int k_nvml_clock_sm = 1;
constexpr int k_nvml_clock_mem = 2;
constexpr unsigned k_max_devices = 64;

// Names from nvml.h's nvmlReturn_t 0..29, in order (the kb holds their meanings and causes;
// a test checks the two agree).
constexpr std::array<std::string_view, 30> k_return_names = {
    "NVML_SUCCESS",
    "NVML_ERROR_UNINITIALIZED",
    "NVML_ERROR_INVALID_ARGUMENT",
    "NVML_ERROR_NOT_SUPPORTED",
    "NVML_ERROR_NO_PERMISSION",
    "NVML_ERROR_ALREADY_INITIALIZED",
    "NVML_ERROR_NOT_FOUND",
    "NVML_ERROR_INSUFFICIENT_SIZE",
    "NVML_ERROR_INSUFFICIENT_POWER",
    "NVML_ERROR_DRIVER_NOT_LOADED",
    "NVML_ERROR_TIMEOUT",
    "NVML_ERROR_IRQ_ISSUE",
    "NVML_ERROR_LIBRARY_NOT_FOUND",
    "NVML_ERROR_FUNCTION_NOT_FOUND",
    "NVML_ERROR_CORRUPTED_INFOROM",
    "NVML_ERROR_GPU_IS_LOST",
    "NVML_ERROR_RESET_REQUIRED",
    "NVML_ERROR_OPERATING_SYSTEM",
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    "NVML_ERROR_IN_USE",
    "NVML_ERROR_MEMORY",
    "NVML_ERROR_NO_DATA",
    "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
    "NVML_ERROR_INSUFFICIENT_RESOURCES",
    "NVML_ERROR_FREQ_NOT_SUPPORTED",
    "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
    "NVML_ERROR_DEPRECATED",
    "NVML_ERROR_NOT_READY",
    "NVML_ERROR_GPU_NOT_FOUND",
    "NVML_ERROR_INVALID_STATE",
};
constexpr int k_nvml_error_unknown = 999;

// The opened libnvidia-ml; each entry point is named as the last call right before it is
// looked up and called.
class Nvml {
 public:
  explicit Nvml(const Library& lib) : m_lib(lib) {}
  template <typename Fn>
  Fn get(const char* name) const {
    note_call(name);
    return m_lib.sym<Fn>(name);
  }
  // The first of the names the library has (a _v2 before the original).
  template <typename Fn>
  Fn get_any(const char* name, const char* fallback) const {
    auto f = get<Fn>(name);
    return f ? f : get<Fn>(fallback);
  }
  std::string error_string(nvmlReturn_t rc) const {
    using F = const char* (*)(nvmlReturn_t);
    if (auto f = get<F>("nvmlErrorString"); f && f(rc)) return f(rc);
    return "error " + std::to_string(rc);
  }

 private:
  const Library& m_lib;
};

// The queries of one device into its JSON object d. A failing query is recorded by name in
// errors; its field keeps its "unknown" value (absent from d).
class DeviceQuery {
 public:
  DeviceQuery(const Nvml& nvml, nvmlDevice_t dev, nlohmann::json& d) : m_nvml(nvml), m_dev(dev), m_d(d) {}

  // Calls the entry point fn, when present, as invoke(f, dev); true when it succeeded.
  template <typename Fn, typename Invoke>
  bool query(const char* fn, Invoke&& invoke) {
    auto f = m_nvml.get<Fn>(fn);
    if (!f) return false;
    const nvmlReturn_t rc = invoke(f, m_dev);
    if (rc != 0) errors.push_back(std::string(fn) + ": " + m_nvml.error_string(rc));
    return rc == 0;
  }
  void str_field(const char* fn, const char* key) {
    char buf[256] = {};
    if (query<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(
            fn, [&](auto f, auto dev) { return f(dev, buf, sizeof buf); }))
      m_d[key] = std::string(buf);
  }
  void uint_field(const char* fn, const char* key, unsigned divisor = 1) {
    unsigned v = 0;
    if (query<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>(fn, [&](auto f, auto dev) { return f(dev, &v); }))
      m_d[key] = static_cast<int>(v / divisor);
  }
  void clock_field(const char* fn, int type, const char* key) {
    unsigned v = 0;
    if (query<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>(fn, [&](auto f, auto dev) { return f(dev, type, &v); }))
      m_d[key] = static_cast<int>(v);
  }
  nlohmann::json& d() { return m_d; }
  const Nvml& nvml() const { return m_nvml; }
  nvmlDevice_t device() const { return m_dev; }

  nlohmann::json errors = nlohmann::json::array();

 private:
  const Nvml& m_nvml;
  nvmlDevice_t m_dev;
  nlohmann::json& m_d;
};

// Name, UUID, bus id and memory.
void query_identity(DeviceQuery& q) {
  q.str_field("nvmlDeviceGetName", "name");
  q.str_field("nvmlDeviceGetUUID", "uuid");
  nvmlPciInfo_t pci{};
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3",
                                                              [&](auto f, auto dev) { return f(dev, &pci); })) {
    pci.busId[sizeof pci.busId - 1] = 0;
    q.d()["pci_bus_id"] = sysfs_bus_id(pci.busId);
  }
  nvmlMemory_t m{};
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo",
                                                             [&](auto f, auto dev) { return f(dev, &m); })) {
    q.d()["memory_total_bytes"] = m.total;
    q.d()["memory_used_bytes"] = m.used;
  }
}

// Temperature, utilisation, power and clocks: what the device does now.
void query_state(DeviceQuery& q) {
  q.clock_field("nvmlDeviceGetTemperature", k_nvml_temperature_gpu, "temperature_c");
  nvmlUtilization_t u{};
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*)>("nvmlDeviceGetUtilizationRates",
                                                                  [&](auto f, auto dev) { return f(dev, &u); })) {
    q.d()["utilization_gpu_pct"] = u.gpu;
    q.d()["utilization_memory_pct"] = u.memory;
  }
  q.uint_field("nvmlDeviceGetPowerManagementLimit", "power_limit_w", 1000);  // milliwatts
  q.uint_field("nvmlDeviceGetEnforcedPowerLimit", "power_limit_enforced_w", 1000);
  q.uint_field("nvmlDeviceGetPowerManagementDefaultLimit", "power_limit_default_w", 1000);
  unsigned min_mw = 0, max_mw = 0;
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*)>(
          "nvmlDeviceGetPowerManagementLimitConstraints", [&](auto f, auto dev) { return f(dev, &min_mw, &max_mw); })) {
    q.d()["power_limit_min_w"] = min_mw / 1000;
    q.d()["power_limit_max_w"] = max_mw / 1000;
  }
  q.uint_field("nvmlDeviceGetPowerUsage", "power_draw_w", 1000);
  q.clock_field("nvmlDeviceGetClockInfo", k_nvml_clock_graphics, "clock_graphics_mhz");
  q.clock_field("nvmlDeviceGetClockInfo", k_nvml_clock_sm, "clock_sm_mhz");
  q.clock_field("nvmlDeviceGetClockInfo", k_nvml_clock_mem, "clock_memory_mhz");
  q.clock_field("nvmlDeviceGetMaxClockInfo", k_nvml_clock_graphics, "max_clock_graphics_mhz");
  q.clock_field("nvmlDeviceGetMaxClockInfo", k_nvml_clock_mem, "max_clock_memory_mhz");
  q.clock_field("nvmlDeviceGetMaxClockInfo", k_nvml_clock_sm, "max_clock_sm_mhz");
  // The clocks-event reasons: NVML 12.2 renamed …ThrottleReasons (kept, deprecated) to this.
  using ReasonsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
  const char* reasons_fn = q.nvml().get<ReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons")
                               ? "nvmlDeviceGetCurrentClocksEventReasons"
                               : "nvmlDeviceGetCurrentClocksThrottleReasons";
  unsigned long long reasons = 0;
  if (q.query<ReasonsFn>(reasons_fn, [&](auto f, auto dev) { return f(dev, &reasons); }))
    q.d()["clocks_event_reasons"] = static_cast<std::int64_t>(reasons & 0x7fffffffffffffffULL);
  int pstate = 0;  // nvmlPstates_t: 0..15, 32 unknown
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, int*)>("nvmlDeviceGetPerformanceState",
                                                    [&](auto f, auto dev) { return f(dev, &pstate); }) &&
      pstate >= 0 && pstate <= 15)
    q.d()["performance_state"] = pstate;
}

// PCIe link, persistence and MIG modes, compute capability.
void query_links_and_modes(DeviceQuery& q) {
  q.uint_field("nvmlDeviceGetCurrPcieLinkGeneration", "pcie_gen_current");
  q.uint_field("nvmlDeviceGetMaxPcieLinkGeneration", "pcie_gen_max");
  q.uint_field("nvmlDeviceGetCurrPcieLinkWidth", "pcie_width_current");
  q.uint_field("nvmlDeviceGetMaxPcieLinkWidth", "pcie_width_max");
  int mode = 0;
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, int*)>("nvmlDeviceGetPersistenceMode",
                                                    [&](auto f, auto dev) { return f(dev, &mode); }))
    q.d()["persistence_mode"] = mode == 1 ? "enabled" : "disabled";
  if (auto f = q.nvml().get<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")) {
    unsigned current = 0, pending = 0;
    // Not Supported on GPUs without MIG is the normal answer, not an error worth listing.
    if (f(q.device(), &current, &pending) == 0) q.d()["mig_mode"] = current == 1 ? "enabled" : "disabled";
  }
  int major = 0, minor = 0;
  if (q.query<nvmlReturn_t (*)(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability",
                                                          [&](auto f, auto dev) { return f(dev, &major, &minor); }))
    q.d()["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
}

nlohmann::json query_device(const Nvml& nvml, unsigned index) {
  nlohmann::json d;
  d["index"] = index;
  using GetHandle = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
  auto get_handle = nvml.get_any<GetHandle>("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
  void* dev = nullptr;
  if (!get_handle) {
    d["errors"] = nlohmann::json::array({"nvmlDeviceGetHandleByIndex: missing from the library"});
    return d;
  }
  if (const auto rc = get_handle(index, &dev); rc != 0) {
    d["errors"] = nlohmann::json::array({"nvmlDeviceGetHandleByIndex: " + nvml.error_string(rc)});
    return d;
  }
  DeviceQuery q(nvml, dev, d);
  query_identity(q);
  query_state(q);
  query_links_and_modes(q);
  d["errors"] = q.errors;
  return d;
}

// Driver and CUDA versions, then every device; after a successful nvmlInit.
void query_system(const Nvml& nvml, nlohmann::json& out) {
  if (auto f = nvml.get<nvmlReturn_t (*)(char*, unsigned)>("nvmlSystemGetDriverVersion")) {
    char buf[96] = {};
    if (f(buf, sizeof buf) == 0) out["driver_version"] = std::string(buf);
  }
  using CudaVersionFn = nvmlReturn_t (*)(int*);
  if (auto cuda_version =
          nvml.get_any<CudaVersionFn>("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")) {
    int v = 0;
    if (cuda_version(&v) == 0) out["cuda_driver_version"] = v;
  }
  using CountFn = nvmlReturn_t (*)(unsigned*);
  auto count = nvml.get_any<CountFn>("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
  nlohmann::json gpus = nlohmann::json::array();
  unsigned n = 0;
  if (count && count(&n) == 0)
    for (unsigned i = 0; i < n && i < k_max_devices; ++i) gpus.push_back(query_device(nvml, i));
  out["gpus"] = gpus;
}

}  // namespace

std::string nvml_return_name(int rc) {
  if (rc >= 0 && static_cast<std::size_t>(rc) < k_return_names.size())
    return std::string(k_return_names[static_cast<std::size_t>(rc)]);
  return rc == k_nvml_error_unknown ? "NVML_ERROR_UNKNOWN" : "NVML_ERROR_?";
}

std::string query_nvml(const std::string& host_library_path) {
  Library lib;
  if (!lib.open(host_library_path, RTLD_NOW | RTLD_LOCAL)) return load_error_reply(lib.error());
  const Nvml nvml(lib);
  using InitFn = nvmlReturn_t (*)();
  auto init = nvml.get_any<InitFn>("nvmlInit_v2", "nvmlInit");
  if (!init) return load_error_reply("no nvmlInit in " + host_library_path);
  nlohmann::json out;
  const nvmlReturn_t rc = init();
  out["init_code"] = rc;
  out["init_error_name"] = nvml_return_name(rc);
  out["init_error_string"] = nvml.error_string(rc);
  if (rc != 0) return reply(out);
  query_system(nvml, out);
  if (auto shutdown = nvml.get<nvmlReturn_t (*)()>("nvmlShutdown")) shutdown();
  return reply(out);
}

snapshot::NvmlFacts probe_nvml(const std::string& host_library_path, std::chrono::milliseconds timeout) {
  return parse_reply<snapshot::NvmlFacts>(run_in_child([&] { return query_nvml(host_library_path); }, timeout));
}

}  // namespace cudoctor::runtime
