/* A stand-in for libcudart.so (the CUDA runtime) whose "device" is host memory, so the
 * computation check's copies can run and be compared here; what a wedged GPU does comes
 * from SIM_MISBEHAVE (misbehave.h: rt_count, rt_malloc, rt_memcpy). It has no cuBLAS.
 *   CUDART_SIM_VERSION  what cudaRuntimeGetVersion reports (default 12040)
 *   CUDART_SIM_DRIVER   what cudaDriverGetVersion reports (default 12020)
 *   CUDA_SIM_GPUS       devices (default 1), as the simulated driver API counts them
 * The ABI follows NVIDIA's cuda_runtime_api.h for the entry points cudoctor calls. */
#include "misbehave.h"

typedef int cudaError_t;

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = env_int("CUDART_SIM_VERSION", 12040);
  return 0;
}
cudaError_t cudaDriverGetVersion(int* v) {
  *v = env_int("CUDART_SIM_DRIVER", 12020);
  return 0;
}
cudaError_t cudaGetDeviceCount(int* n) {
  sim_misbehave("rt_count");
  *n = env_int("CUDA_SIM_GPUS", 1);
  return 0;
}
cudaError_t cudaSetDevice(int d) {
  if (d < 0 || d >= env_int("CUDA_SIM_GPUS", 1)) return 101; /* cudaErrorInvalidDevice */
  return sim_exclusive_context();                            /* 46: cudaErrorDevicesUnavailable */
}
cudaError_t cudaMalloc(void** p, size_t n) {
  sim_misbehave("rt_malloc");
  *p = malloc(n);
  return *p ? 0 : 2; /* cudaErrorMemoryAllocation */
}
cudaError_t cudaFree(void* p) {
  free(p);
  return 0;
}
cudaError_t cudaMallocHost(void** p, size_t n) {
  return cudaMalloc(p, n);
}
cudaError_t cudaFreeHost(void* p) {
  return cudaFree(p);
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
  (void)kind;
  sim_misbehave("rt_memcpy");
  memcpy(dst, src, n);
  return 0;
}
cudaError_t cudaDeviceSynchronize(void) {
  return 0;
}
const char* cudaGetErrorName(cudaError_t e) {
  return e == 0 ? "cudaSuccess" : e == 2 ? "cudaErrorMemoryAllocation" : "cudaErrorInvalidDevice";
}
const char* cudaGetErrorString(cudaError_t e) {
  return e == 0 ? "no error" : "error";
}
