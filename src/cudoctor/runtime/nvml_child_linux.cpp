#include <dlfcn.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cudoctor/runtime/child.hpp"
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

class Nvml {
 public:
  explicit Nvml(void* lib) : m_lib(lib) {}
  template <typename Fn>
  Fn get(const char* name) const {
    note_call(name);  // each entry point is looked up right before it is called
    return reinterpret_cast<Fn>(::dlsym(m_lib, name));
  }
  std::string error_string(nvmlReturn_t rc) const {
    using F = const char* (*)(nvmlReturn_t);
    if (auto f = get<F>("nvmlErrorString"); f && f(rc)) return f(rc);
    return "error " + std::to_string(rc);
  }

 private:
  void* m_lib;
};

// NVML writes "00000000:01:00.0"; sysfs writes "0000:01:00.0".
std::string sysfs_bus_id(const char* nvml_id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(nvml_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return nvml_id;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain & 0xffff, bus, dev, fn);
  return buf;
}

nlohmann::json query_device(const Nvml& nvml, unsigned index) {
  nlohmann::json d;
  d["index"] = index;
  nlohmann::json errors = nlohmann::json::array();
  void* dev = nullptr;
  using GetHandle = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
  auto get_handle = nvml.get<GetHandle>("nvmlDeviceGetHandleByIndex_v2");
  if (!get_handle) get_handle = nvml.get<GetHandle>("nvmlDeviceGetHandleByIndex");
  if (!get_handle) {
    errors.push_back("nvmlDeviceGetHandleByIndex: missing from the library");
    d["errors"] = errors;
    return d;
  }
  if (const auto rc = get_handle(index, &dev); rc != 0) {
    errors.push_back("nvmlDeviceGetHandleByIndex: " + nvml.error_string(rc));
    d["errors"] = errors;
    return d;
  }
  // Calls one NVML query; a failure is recorded by name, the field keeps its "unknown" value.
  const auto call = [&](const char* name, auto&& invoke) {
    const nvmlReturn_t rc = invoke();
    if (rc != 0) errors.push_back(std::string(name) + ": " + nvml.error_string(rc));
    return rc == 0;
  };
  using StrFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned);
  using UintFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
  using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*);
  const auto str_field = [&](const char* fn, const char* key) {
    if (auto f = nvml.get<StrFn>(fn)) {
      char buf[256] = {};
      if (call(fn, [&] { return f(dev, buf, sizeof buf); })) d[key] = std::string(buf);
    }
  };
  const auto uint_field = [&](const char* fn, const char* key, unsigned divisor = 1) {
    if (auto f = nvml.get<UintFn>(fn)) {
      unsigned v = 0;
      if (call(fn, [&] { return f(dev, &v); })) d[key] = static_cast<int>(v / divisor);
    }
  };
  const auto clock_field = [&](const char* fn, int type, const char* key) {
    if (auto f = nvml.get<ClockFn>(fn)) {
      unsigned v = 0;
      if (call(fn, [&] { return f(dev, type, &v); })) d[key] = static_cast<int>(v);
    }
  };
  str_field("nvmlDeviceGetName", "name");
  str_field("nvmlDeviceGetUUID", "uuid");
  if (auto f = nvml.get<nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*)>("nvmlDeviceGetPciInfo_v3")) {
    nvmlPciInfo_t pci{};
    if (call("nvmlDeviceGetPciInfo_v3", [&] { return f(dev, &pci); })) {
      pci.busId[sizeof pci.busId - 1] = 0;
      d["pci_bus_id"] = sysfs_bus_id(pci.busId);
    }
  }
  if (auto f = nvml.get<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo")) {
    nvmlMemory_t m{};
    if (call("nvmlDeviceGetMemoryInfo", [&] { return f(dev, &m); })) {
      d["memory_total_bytes"] = m.total;
      d["memory_used_bytes"] = m.used;
    }
  }
  clock_field("nvmlDeviceGetTemperature", k_nvml_temperature_gpu, "temperature_c");
  if (auto f = nvml.get<nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*)>("nvmlDeviceGetUtilizationRates")) {
    nvmlUtilization_t u{};
    if (call("nvmlDeviceGetUtilizationRates", [&] { return f(dev, &u); })) {
      d["utilization_gpu_pct"] = u.gpu;
      d["utilization_memory_pct"] = u.memory;
    }
  }
  uint_field("nvmlDeviceGetPowerManagementLimit", "power_limit_w", 1000);  // milliwatts
  uint_field("nvmlDeviceGetPowerUsage", "power_draw_w", 1000);
  clock_field("nvmlDeviceGetClockInfo", k_nvml_clock_graphics, "clock_graphics_mhz");
  clock_field("nvmlDeviceGetClockInfo", k_nvml_clock_sm, "clock_sm_mhz");
  clock_field("nvmlDeviceGetClockInfo", k_nvml_clock_mem, "clock_memory_mhz");
  clock_field("nvmlDeviceGetMaxClockInfo", k_nvml_clock_graphics, "max_clock_graphics_mhz");
  clock_field("nvmlDeviceGetMaxClockInfo", k_nvml_clock_mem, "max_clock_memory_mhz");
  uint_field("nvmlDeviceGetCurrPcieLinkGeneration", "pcie_gen_current");
  uint_field("nvmlDeviceGetMaxPcieLinkGeneration", "pcie_gen_max");
  uint_field("nvmlDeviceGetCurrPcieLinkWidth", "pcie_width_current");
  uint_field("nvmlDeviceGetMaxPcieLinkWidth", "pcie_width_max");
  if (auto f = nvml.get<nvmlReturn_t (*)(nvmlDevice_t, int*)>("nvmlDeviceGetPersistenceMode")) {
    int mode = 0;
    if (call("nvmlDeviceGetPersistenceMode", [&] { return f(dev, &mode); }))
      d["persistence_mode"] = mode == 1 ? "enabled" : "disabled";
  }
  if (auto f = nvml.get<nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")) {
    unsigned current = 0, pending = 0;
    // Not Supported on GPUs without MIG is the normal answer, not an error worth listing.
    if (f(dev, &current, &pending) == 0) d["mig_mode"] = current == 1 ? "enabled" : "disabled";
  }
  if (auto f = nvml.get<nvmlReturn_t (*)(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability")) {
    int major = 0, minor = 0;
    if (call("nvmlDeviceGetCudaComputeCapability", [&] { return f(dev, &major, &minor); }))
      d["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
  }
  d["errors"] = errors;
  return d;
}

const char* nvml_return_name(int rc);

}  // namespace

std::string query_nvml(const std::string& host_library_path) {
  nlohmann::json out;
  note_call("dlopen (the library's constructors)");
  void* lib = ::dlopen(host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    out["load_error"] = e ? e : "unknown dlopen error";
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const Nvml nvml(lib);
  using InitFn = nvmlReturn_t (*)();
  auto init = nvml.get<InitFn>("nvmlInit_v2");
  if (!init) init = nvml.get<InitFn>("nvmlInit");
  if (!init) {
    out["load_error"] = "no nvmlInit in " + host_library_path;
    return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const nvmlReturn_t rc = init();
  out["init_code"] = rc;
  out["init_error_name"] = nvml_return_name(rc);
  out["init_error_string"] = nvml.error_string(rc);
  if (rc != 0) return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  if (auto f = nvml.get<nvmlReturn_t (*)(char*, unsigned)>("nvmlSystemGetDriverVersion")) {
    char buf[96] = {};
    if (f(buf, sizeof buf) == 0) out["driver_version"] = std::string(buf);
  }
  using CudaVersionFn = nvmlReturn_t (*)(int*);
  auto cuda_version = nvml.get<CudaVersionFn>("nvmlSystemGetCudaDriverVersion_v2");
  if (!cuda_version) cuda_version = nvml.get<CudaVersionFn>("nvmlSystemGetCudaDriverVersion");
  if (cuda_version) {
    int v = 0;
    if (cuda_version(&v) == 0) out["cuda_driver_version"] = v;
  }
  using CountFn = nvmlReturn_t (*)(unsigned*);
  auto count = nvml.get<CountFn>("nvmlDeviceGetCount_v2");
  if (!count) count = nvml.get<CountFn>("nvmlDeviceGetCount");
  nlohmann::json gpus = nlohmann::json::array();
  unsigned n = 0;
  if (count && count(&n) == 0)
    for (unsigned i = 0; i < n && i < 64; ++i) gpus.push_back(query_device(nvml, i));
  out["gpus"] = gpus;
  if (auto shutdown = nvml.get<nvmlReturn_t (*)()>("nvmlShutdown")) shutdown();
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {
// Names from nvml.h's nvmlReturn_t; the kb holds their meanings and causes.
const char* nvml_return_name(int rc) {
  switch (rc) {
    case 0:
      return "NVML_SUCCESS";
    case 1:
      return "NVML_ERROR_UNINITIALIZED";
    case 2:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case 3:
      return "NVML_ERROR_NOT_SUPPORTED";
    case 4:
      return "NVML_ERROR_NO_PERMISSION";
    case 5:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 7:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10:
      return "NVML_ERROR_TIMEOUT";
    case 11:
      return "NVML_ERROR_IRQ_ISSUE";
    case 12:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 16:
      return "NVML_ERROR_RESET_REQUIRED";
    case 17:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case 18:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19:
      return "NVML_ERROR_IN_USE";
    case 20:
      return "NVML_ERROR_MEMORY";
    case 21:
      return "NVML_ERROR_NO_DATA";
    case 22:
      return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23:
      return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24:
      return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26:
      return "NVML_ERROR_DEPRECATED";
    case 27:
      return "NVML_ERROR_NOT_READY";
    case 28:
      return "NVML_ERROR_GPU_NOT_FOUND";
    case 29:
      return "NVML_ERROR_INVALID_STATE";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "NVML_ERROR_?";
  }
}
}  // namespace

snapshot::NvmlFacts probe_nvml(const std::string& host_library_path, std::chrono::milliseconds timeout) {
  return parse_reply<snapshot::NvmlFacts>(run_in_child([&] { return query_nvml(host_library_path); }, timeout));
}

}  // namespace cudoctor::runtime
