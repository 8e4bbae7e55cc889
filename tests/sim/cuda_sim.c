/* A stand-in for libcuda.so.1 (the CUDA driver API) whose cuInit behaves as real drivers do
 * on machines this one is not, or as broken ones do:
 *   CUDA_SIM_MODE    ok | no_device | unknown_error | compat_unsupported | segfault | hang | exit
 *   CUDA_SIM_DRIVER  what cuDriverGetVersion reports (default 12020)
 *   CUDA_SIM_GPUS    devices in ok mode (default 1)
 * SIM_MISBEHAVE (misbehave.h) adds what no mode covers.
 * Only the entry points cudoctor's driver-API probe calls; the ABI follows NVIDIA's cuda.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "misbehave.h"

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;

static const char* env_or(const char* name, const char* fallback) {
  const char* v = getenv(name);
  return v && *v ? v : fallback;
}

CUresult cuDriverGetVersion(int* v) {
  *v = atoi(env_or("CUDA_SIM_DRIVER", "12020"));
  return 0;
}
CUresult cuInit(unsigned flags) {
  (void)flags;
  sim_misbehave("cu_init");
  const char* mode = env_or("CUDA_SIM_MODE", "ok");
  if (!strcmp(mode, "segfault")) raise(SIGSEGV);
  if (!strcmp(mode, "exit")) exit(1);
  if (!strcmp(mode, "hang"))
    for (;;) pause();
  if (!strcmp(mode, "no_device")) return 100;          /* CUDA_ERROR_NO_DEVICE */
  if (!strcmp(mode, "unknown_error")) return 999;      /* CUDA_ERROR_UNKNOWN */
  if (!strcmp(mode, "compat_unsupported")) return 804; /* CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE */
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case 0:
      *s = "CUDA_SUCCESS";
      return 0;
    case 100:
      *s = "CUDA_ERROR_NO_DEVICE";
      return 0;
    case 804:
      *s = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
      return 0;
    case 999:
      *s = "CUDA_ERROR_UNKNOWN";
      return 0;
    default:
      *s = 0;
      return 1;
  }
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == 100 ? "no CUDA-capable device is detected" : r == 999 ? "unknown error" : r == 0 ? "no error" : "error";
  return 0;
}
CUresult cuDeviceGetCount(int* n) {
  *n = atoi(env_or("CUDA_SIM_GPUS", "1"));
  return 0;
}
CUresult cuDeviceGet(CUdevice* d, int i) {
  *d = i;
  return 0;
}
CUresult cuDeviceGetName(char* s, int n, CUdevice d) {
  (void)d;
  snprintf(s, (size_t)n, "%s", "NVIDIA H100 80GB HBM3");
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* b, CUdevice d) {
  (void)d;
  *b = 85520809984ULL;
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  (void)d;
  switch (attr) {
    case 75:
      *v = 9;
      break; /* compute capability major */
    case 76:
      *v = 0;
      break; /* minor */
    case 16:
      *v = 132;
      break; /* multiprocessors */
    case 13:
      *v = 1980000;
      break; /* clock, kHz */
    case 36:
      *v = 2619000;
      break; /* memory clock, kHz */
    case 37:
      *v = 5120;
      break; /* bus width, bits */
    default:
      *v = 0;
  }
  return 0;
}
CUresult cuDeviceGetPCIBusId(char* s, int n, CUdevice d) {
  snprintf(s, (size_t)n, "00000000:%02X:00.0", 0x1b + d);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  (void)d;
  *c = (CUcontext)0x1;
  return sim_exclusive_context();
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  (void)d;
  return 0;
}
