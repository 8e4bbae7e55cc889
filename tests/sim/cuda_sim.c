/* A stand-in for libcuda.so.1 (the CUDA driver API) whose cuInit behaves as real drivers do
 * on machines this one is not, or as broken ones do:
 *   CUDA_SIM_MODE    ok | no_device | unknown_error | compat_unsupported | mismatch |
 *                    segfault | hang | exit
 *   CUDA_SIM_INIT    any cuInit return code, overriding the mode ("803")
 *   CUDA_SIM_DRIVER  what cuDriverGetVersion reports
 *   CUDA_SIM_GPUS    devices in ok mode
 *   CUDA_SIM_NAME    device name
 *   CUDA_SIM_CC      compute capability "major.minor"
 *   CUDA_SIM_BUSES   comma-separated hex bus numbers, one per device (default 1b, 1c, …)
 * Each falls back to the NVML sim's variable (NVML_SIM_MODE=mismatch, NVML_SIM_CUDA,
 * NVML_SIM_GPUS, NVML_SIM_NAME, NVML_SIM_CC, NVML_SIM_BUSES, NVML_SIM_BUS), so one machine
 * description makes both libraries report the same driver and GPUs, then to an H100 80GB
 * on CUDA 12.2. A driver/library version mismatch fails cuInit with 803
 * (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH), as NVML's fails with 18.
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
/* CUDA_SIM_<what>, else NVML_SIM_<what>, else fallback. */
static const char* sim_or(const char* what, const char* fallback) {
  char cuda[64], nvml[64];
  snprintf(cuda, sizeof cuda, "CUDA_SIM_%s", what);
  snprintf(nvml, sizeof nvml, "NVML_SIM_%s", what);
  return env_or(cuda, env_or(nvml, fallback));
}
static const char* mode(void) {
  const char* m = getenv("CUDA_SIM_MODE");
  if (m && *m) return m;
  return !strcmp(env_or("NVML_SIM_MODE", "ok"), "mismatch") ? "mismatch" : "ok";
}

CUresult cuDriverGetVersion(int* v) {
  *v = atoi(env_or("CUDA_SIM_DRIVER", env_or("NVML_SIM_CUDA", "12020")));
  return 0;
}
CUresult cuInit(unsigned flags) {
  (void)flags;
  sim_misbehave("cu_init");
  const char* m = mode();
  if (getenv("CUDA_SIM_INIT") && *getenv("CUDA_SIM_INIT")) return atoi(getenv("CUDA_SIM_INIT"));
  if (!strcmp(m, "segfault")) raise(SIGSEGV);
  if (!strcmp(m, "exit")) exit(1);
  if (!strcmp(m, "hang"))
    for (;;) pause();
  if (!strcmp(m, "no_device")) return 100;          /* CUDA_ERROR_NO_DEVICE */
  if (!strcmp(m, "unknown_error")) return 999;      /* CUDA_ERROR_UNKNOWN */
  if (!strcmp(m, "compat_unsupported")) return 804; /* CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE */
  if (!strcmp(m, "mismatch")) return 803;           /* CUDA_ERROR_SYSTEM_DRIVER_MISMATCH */
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
    case 803:
      *s = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
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
  *s = r == 100   ? "no CUDA-capable device is detected"
       : r == 803 ? "system has unsupported display driver / cuda driver combination"
       : r == 999 ? "unknown error"
       : r == 0   ? "no error"
                  : "error";
  return 0;
}
CUresult cuDeviceGetCount(int* n) {
  *n = atoi(sim_or("GPUS", "1"));
  return 0;
}
CUresult cuDeviceGet(CUdevice* d, int i) {
  *d = i;
  return 0;
}
CUresult cuDeviceGetName(char* s, int n, CUdevice d) {
  (void)d;
  snprintf(s, (size_t)n, "%s", sim_or("NAME", "NVIDIA H100 80GB HBM3"));
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* b, CUdevice d) {
  (void)d;
  *b = 85520809984ULL;
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  (void)d;
  int major = 9, minor = 0;
  sscanf(sim_or("CC", "9.0"), "%d.%d", &major, &minor);
  switch (attr) {
    case 75:
      *v = major;
      break; /* compute capability major */
    case 76:
      *v = minor;
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
/* The bus of device d: the d-th entry of the list, else first + d. */
static unsigned bus_of(CUdevice d) {
  const char* list = sim_or("BUSES", 0);
  if (list) {
    for (int i = 0; i < d && list; ++i) {
      list = strchr(list, ',');
      if (list) ++list;
    }
    if (list) return (unsigned)strtoul(list, 0, 16);
  }
  const char* first = env_or("NVML_SIM_BUS", 0);
  return (first ? (unsigned)atoi(first) : 0x1bu) + (unsigned)d;
}
CUresult cuDeviceGetPCIBusId(char* s, int n, CUdevice d) {
  snprintf(s, (size_t)n, "00000000:%02X:00.0", bus_of(d));
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
