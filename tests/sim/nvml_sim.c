/* A stand-in for libnvidia-ml.so.1 that behaves as NVML does on machines this one is not:
 * a working driver with N GPUs, a driver/library version mismatch, or a library that
 * crashes, hangs or exits inside nvmlInit. Behaviour comes from the environment:
 *   NVML_SIM_MODE    ok | mismatch | driver_not_loaded | segfault | hang | exit | abort
 *   NVML_SIM_GPUS    number of GPUs (default 1)
 *   NVML_SIM_NAME    device name (default "NVIDIA H100 80GB HBM3")
 *   NVML_SIM_DRIVER  driver version (default "535.104.05")
 *   NVML_SIM_CUDA    CUDA driver version, encoded (default 12020)
 *   NVML_SIM_CC      compute capability "major.minor" (default "9.0")
 *   NVML_SIM_BUS     first PCI bus number; GPU i sits on bus (first + i) (default 1)
 *   NVML_SIM_BUSES   comma-separated hex bus numbers, one per GPU (overrides NVML_SIM_BUS)
 *   NVML_SIM_POWER   power limits in W, "current,enforced,default,min,max" (default an H100 SXM's
 *                    700,700,700,200,700); "unsupported" answers Not Supported, as laptops do
 *   NVML_SIM_REASONS clocks-event reasons, hex (default 0x1, GpuIdle)
 *   NVML_SIM_PSTATE  performance state 0..15 (default 0)
 *   NVML_SIM_UTIL    GPU utilisation in percent (default 0)
 *   NVML_SIM_TEMP    temperature in degrees C (default 31)
 *   NVML_SIM_PCIE    "current gen,max gen,current width,max width" (default 5,5,16,16)
 * SIM_MISBEHAVE (misbehave.h) adds what no mode covers. Only the entry points cudoctor calls are provided; the ABI
 * follows NVIDIA's nvml.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "misbehave.h"

typedef int nvmlReturn_t;
typedef struct {
  int index;
} sim_device;
typedef sim_device* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int gpu, memory;
} nvmlUtilization_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

static sim_device devices[64];

static const char* env_or(const char* name, const char* fallback) {
  const char* v = getenv(name);
  return v && *v ? v : fallback;
}
static int gpu_count(void) {
  int n = atoi(env_or("NVML_SIM_GPUS", "1"));
  return n < 0 ? 0 : n > 64 ? 64 : n;
}

nvmlReturn_t nvmlInit_v2(void) {
  sim_misbehave("nvml_init");
  const char* mode = env_or("NVML_SIM_MODE", "ok");
  if (!strcmp(mode, "segfault")) raise(SIGSEGV);
  if (!strcmp(mode, "abort")) abort();
  if (!strcmp(mode, "exit")) exit(3);
  if (!strcmp(mode, "hang"))
    for (;;) pause();
  if (!strcmp(mode, "mismatch")) return 18;         /* NVML_ERROR_LIB_RM_VERSION_MISMATCH */
  if (!strcmp(mode, "driver_not_loaded")) return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
  return 0;
}
nvmlReturn_t nvmlShutdown(void) {
  return 0;
}

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case 0:
      return "Success";
    case 3:
      return "Not Supported";
    case 9:
      return "Driver Not Loaded";
    case 18:
      return "Driver/library version mismatch";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned int n) {
  snprintf(v, n, "%s", env_or("NVML_SIM_DRIVER", "535.104.05"));
  return 0;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = atoi(env_or("NVML_SIM_CUDA", "12020"));
  return 0;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = (unsigned int)gpu_count();
  return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  if ((int)i >= gpu_count()) return 2;
  devices[i].index = (int)i;
  *d = &devices[i];
  return 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* s, unsigned int n) {
  (void)d;
  snprintf(s, n, "%s", env_or("NVML_SIM_NAME", "NVIDIA H100 80GB HBM3"));
  return 0;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* s, unsigned int n) {
  snprintf(s, n, "GPU-5a1c0de0-0000-4000-8000-%012d", d->index);
  return 0;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  memset(p, 0, sizeof *p);
  p->bus = (unsigned int)(atoi(env_or("NVML_SIM_BUS", "1")) + d->index);
  const char* list = getenv("NVML_SIM_BUSES");
  if (list) {
    const char* s = list;
    for (int i = 0; i < d->index && s; ++i) {
      s = strchr(s, ',');
      if (s) ++s;
    }
    if (s) p->bus = (unsigned int)strtoul(s, NULL, 16);
  }
  snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
  return 0;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  (void)d;
  m->total = 85520809984ULL; /* what an H100 80GB HBM3 reports */
  m->used = 560988160ULL;
  m->free = m->total - m->used;
  return 0;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* t) {
  (void)d;
  (void)sensor;
  *t = (unsigned)atoi(env_or("NVML_SIM_TEMP", "31"));
  return 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  (void)d;
  u->gpu = (unsigned)atoi(env_or("NVML_SIM_UTIL", "0"));
  u->memory = 0;
  return 0;
}
/* The i-th (0-based) comma-separated number of variable name, or fallback. */
static long env_item(const char* name, const char* fallback, int i) {
  const char* s = env_or(name, fallback);
  for (int k = 0; k < i && s; ++k) {
    s = strchr(s, ',');
    if (s) ++s;
  }
  return s ? strtol(s, NULL, 0) : 0;
}
static const char* k_power = "700,700,700,200,700";
static nvmlReturn_t power_item(int i, unsigned int* mw) {
  if (!strcmp(env_or("NVML_SIM_POWER", k_power), "unsupported")) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  *mw = (unsigned)env_item("NVML_SIM_POWER", k_power, i) * 1000u;
  return 0;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int* mw) {
  (void)d;
  return power_item(0, mw);
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  (void)d;
  return power_item(1, mw);
}
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int* mw) {
  (void)d;
  return power_item(2, mw);
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d, unsigned int* min, unsigned int* max) {
  (void)d;
  nvmlReturn_t rc = power_item(3, min);
  return rc ? rc : power_item(4, max);
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* reasons) {
  (void)d;
  *reasons = strtoull(env_or("NVML_SIM_REASONS", "0x1"), NULL, 16);
  return 0;
}
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int* pstate) {
  (void)d;
  *pstate = atoi(env_or("NVML_SIM_PSTATE", "0"));
  return 0;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  (void)d;
  *mw = 71000;
  return 0;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int* c) {
  (void)d;
  *c = type == 2 ? 2619 : 345;
  return 0;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int* c) {
  (void)d;
  *c = type == 2 ? 2619 : 1980;
  return 0;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int* g) {
  (void)d;
  *g = (unsigned)env_item("NVML_SIM_PCIE", "5,5,16,16", 0);
  return 0;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int* g) {
  (void)d;
  *g = (unsigned)env_item("NVML_SIM_PCIE", "5,5,16,16", 1);
  return 0;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int* w) {
  (void)d;
  *w = (unsigned)env_item("NVML_SIM_PCIE", "5,5,16,16", 2);
  return 0;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int* w) {
  (void)d;
  *w = (unsigned)env_item("NVML_SIM_PCIE", "5,5,16,16", 3);
  return 0;
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* m) {
  (void)d;
  *m = 1;
  return 0;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* c, unsigned int* p) {
  (void)d;
  *c = 0;
  *p = 0;
  return 0;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  (void)d;
  const char* cc = env_or("NVML_SIM_CC", "9.0");
  *major = atoi(cc);
  const char* dot = strchr(cc, '.');
  *minor = dot ? atoi(dot + 1) : 0;
  return 0;
}
