#include <cstddef>

#include "cudoctor/runtime/bus_id.hpp"
#include "cudoctor/runtime/cuda_child.hpp"
#include "cudoctor/runtime/library_linux.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::runtime {
namespace {

// The driver API as declared in cuda.h.
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
constexpr int k_attr_cc_major = 75, k_attr_cc_minor = 76, k_attr_sm_count = 16, k_attr_clock = 13,
              k_attr_mem_clock = 36, k_attr_bus_width = 37;
constexpr int k_max_devices = 64;

// The per-device entry points; any may be missing from an odd libcuda.
struct DeviceCalls {
  CUresult (*get)(CUdevice*, int) = nullptr;
  CUresult (*name)(char*, int, CUdevice) = nullptr;
  CUresult (*total_mem)(std::size_t*, CUdevice) = nullptr;
  CUresult (*attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*bus_id)(char*, int, CUdevice) = nullptr;
  CUresult (*retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*release)(CUdevice) = nullptr;
};

DeviceCalls device_calls(const Library& cuda) {
  DeviceCalls c;
  c.get = cuda.sym<decltype(c.get)>("cuDeviceGet");
  c.name = cuda.sym<decltype(c.name)>("cuDeviceGetName");
  c.total_mem = cuda.sym<decltype(c.total_mem)>("cuDeviceTotalMem_v2");
  c.attribute = cuda.sym<decltype(c.attribute)>("cuDeviceGetAttribute");
  c.bus_id = cuda.sym<decltype(c.bus_id)>("cuDeviceGetPCIBusId");
  c.retain = cuda.sym<decltype(c.retain)>("cuDevicePrimaryCtxRetain");
  c.release = cuda.sym<decltype(c.release)>("cuDevicePrimaryCtxRelease_v2");
  return c;
}

// rc with its name and text from cuGetErrorName/cuGetErrorString.
snapshot::CudaCall driver_call(const Library& cuda, CUresult rc) {
  snapshot::CudaCall c;
  c.code = rc;
  const char* name = nullptr;
  const char* text = nullptr;
  if (auto f = cuda.sym<CUresult (*)(CUresult, const char**)>("cuGetErrorName")) f(rc, &name);
  if (auto f = cuda.sym<CUresult (*)(CUresult, const char**)>("cuGetErrorString")) f(rc, &text);
  c.name = name ? name : "CUresult " + std::to_string(rc);
  c.message = text ? text : "";
  return c;
}

// Device dev's name, memory, attributes, bus id and whether a context can be made on it.
snapshot::CudaDevice query_device(const Library& cuda, const DeviceCalls& c, int index, CUdevice dev) {
  snapshot::CudaDevice d;
  d.index = index;
  char buf[256] = {};
  if (c.name && c.name(buf, sizeof buf, dev) == 0) d.name = buf;
  std::size_t bytes = 0;
  if (c.total_mem && c.total_mem(&bytes, dev) == 0) d.memory_total_bytes = bytes;
  const auto a = [&](int which) {
    int v = 0;
    return c.attribute && c.attribute(&v, which, dev) == 0 ? v : 0;
  };
  d.compute_capability = std::to_string(a(k_attr_cc_major)) + "." + std::to_string(a(k_attr_cc_minor));
  d.multiprocessors = a(k_attr_sm_count);
  d.clock_mhz = a(k_attr_clock) / 1000;             // kHz
  d.memory_clock_mhz = a(k_attr_mem_clock) / 1000;  // kHz
  d.memory_bus_width_bits = a(k_attr_bus_width);
  char pci[64] = {};
  if (c.bus_id && c.bus_id(pci, sizeof pci, dev) == 0) d.pci_bus_id = sysfs_bus_id(pci);
  if (c.retain) {
    CUcontext ctx = nullptr;
    note_call("cuDevicePrimaryCtxRetain");
    d.context = driver_call(cuda, c.retain(&ctx, dev));
    if (d.context.code == 0 && c.release) c.release(dev);
  }
  return d;
}

// After a successful cuInit: the device count and each device.
void query_devices(const Library& cuda, snapshot::DriverApiFacts& f) {
  note_call("cuDeviceGetCount");
  if (auto count = cuda.sym<CUresult (*)(int*)>("cuDeviceGetCount")) {
    int n = 0;
    f.device_count_call = driver_call(cuda, count(&n));
    if (f.device_count_call.code == 0) f.device_count = n;
  }
  const auto calls = device_calls(cuda);
  for (int i = 0; i < f.device_count && i < k_max_devices && calls.get; ++i) {
    CUdevice dev = 0;
    note_call("cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute");
    if (calls.get(&dev, i) != 0) continue;
    f.devices.push_back(query_device(cuda, calls, i, dev));
  }
}

}  // namespace

std::string driver_api_child(const std::string& libcuda) {
  snapshot::DriverApiFacts f;
  Library cuda;
  if (!cuda.open(libcuda, RTLD_NOW | RTLD_LOCAL)) return load_error_reply(cuda.error());
  note_call("cuDriverGetVersion");
  if (auto v = cuda.sym<CUresult (*)(int*)>("cuDriverGetVersion")) v(&f.driver_version);
  note_call("cuInit");
  auto init = cuda.sym<CUresult (*)(unsigned)>("cuInit");
  if (!init) return load_error_reply("no cuInit in " + libcuda);
  f.init = driver_call(cuda, init(0));
  if (f.init.code == 0) query_devices(cuda, f);
  return reply(f);
}

}  // namespace cudoctor::runtime
