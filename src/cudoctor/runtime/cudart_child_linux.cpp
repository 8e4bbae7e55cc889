#include "cudoctor/runtime/cuda_child.hpp"
#include "cudoctor/runtime/cudart_linux.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::runtime {

snapshot::CudaCall runtime_call(const Library& rt, cudaError_t rc) {
  snapshot::CudaCall c;
  c.code = rc;
  if (auto f = rt.sym<const char* (*)(cudaError_t)>("cudaGetErrorName")) c.name = f(rc) ? f(rc) : "";
  if (auto f = rt.sym<const char* (*)(cudaError_t)>("cudaGetErrorString")) c.message = f(rc) ? f(rc) : "";
  if (c.name.empty()) c.name = "cudaError " + std::to_string(rc);
  return c;
}

bool preload_libcuda(Library& cuda, const std::string& libcuda, std::string& error) {
  if (libcuda.empty()) return true;
  if (!cuda.open(libcuda, RTLD_NOW | RTLD_GLOBAL)) {
    error = cuda.error();
    return false;
  }
  return true;
}

std::string cudart_child(const std::string& cudart, const std::string& libcuda) {
  snapshot::CudartFacts f;
  Library cuda, rt;
  std::string err;
  if (!preload_libcuda(cuda, libcuda, err)) return load_error_reply(err);
  if (!rt.open(cudart, RTLD_NOW | RTLD_LOCAL)) return load_error_reply(rt.error());
  note_call("cudaRuntimeGetVersion");
  if (auto v = rt.sym<cudaError_t (*)(int*)>("cudaRuntimeGetVersion")) v(&f.runtime_version);
  note_call("cudaDriverGetVersion");
  if (auto v = rt.sym<cudaError_t (*)(int*)>("cudaDriverGetVersion")) v(&f.driver_version);
  note_call("cudaGetDeviceCount");
  if (auto count = rt.sym<cudaError_t (*)(int*)>("cudaGetDeviceCount")) {
    int n = 0;
    f.device_count_call = runtime_call(rt, count(&n));
    if (f.device_count_call.code == 0) f.device_count = n;
  }
  note_call("cudaSetDevice");
  if (f.device_count > 0)
    if (auto set = rt.sym<cudaError_t (*)(int)>("cudaSetDevice")) f.set_device = runtime_call(rt, set(0));
  return reply(f);
}

}  // namespace cudoctor::runtime
