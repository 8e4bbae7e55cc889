#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "cudoctor/runtime/child.hpp"
#include "cudoctor/runtime/cuda_child.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::runtime {
namespace {

using snapshot::CudaCall;

// A library opened in the child; symbols looked up by name (the ABI is NVIDIA's headers').
class Lib {
 public:
  Lib() = default;
  bool open(const std::string& path, int flags) {
    note_call("dlopen (the library's constructors)");
    m_h = ::dlopen(path.c_str(), flags);
    if (!m_h) {
      const char* e = ::dlerror();
      m_error = e ? e : "dlopen failed";
    }
    return m_h != nullptr;
  }
  template <typename Fn>
  Fn sym(const char* name) const {
    return m_h ? reinterpret_cast<Fn>(::dlsym(m_h, name)) : nullptr;
  }
  const std::string& error() const { return m_error; }

 private:
  void* m_h = nullptr;
  std::string m_error;
};

// --- driver API (cuda.h)
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
constexpr int k_attr_cc_major = 75, k_attr_cc_minor = 76, k_attr_sm_count = 16, k_attr_clock = 13,
              k_attr_mem_clock = 36, k_attr_bus_width = 37;

CudaCall driver_call(const Lib& cuda, CUresult rc) {
  CudaCall c;
  c.code = rc;
  const char* name = nullptr;
  const char* text = nullptr;
  if (auto f = cuda.sym<CUresult (*)(CUresult, const char**)>("cuGetErrorName")) f(rc, &name);
  if (auto f = cuda.sym<CUresult (*)(CUresult, const char**)>("cuGetErrorString")) f(rc, &text);
  c.name = name ? name : "CUresult " + std::to_string(rc);
  c.message = text ? text : "";
  return c;
}

// "00000000:1B:00.0" or "0000:1b:00.0" -> sysfs form.
std::string sysfs_bus_id(const char* id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return id;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain & 0xffff, bus, dev, fn);
  return buf;
}

}  // namespace

std::string driver_api_child(const std::string& libcuda) {
  snapshot::DriverApiFacts f;
  Lib cuda;
  if (!cuda.open(libcuda, RTLD_NOW | RTLD_LOCAL))
    return nlohmann::json{{"load_error", cuda.error()}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  note_call("cuDriverGetVersion");
  if (auto v = cuda.sym<CUresult (*)(int*)>("cuDriverGetVersion")) v(&f.driver_version);
  note_call("cuInit");
  auto init = cuda.sym<CUresult (*)(unsigned)>("cuInit");
  if (!init)
    return nlohmann::json{{"load_error", "no cuInit in " + libcuda}}.dump(-1, ' ', false,
                                                                          nlohmann::json::error_handler_t::replace);
  f.init = driver_call(cuda, init(0));
  if (f.init.code == 0) {
    note_call("cuDeviceGetCount");
    if (auto count = cuda.sym<CUresult (*)(int*)>("cuDeviceGetCount")) {
      int n = 0;
      f.device_count_call = driver_call(cuda, count(&n));
      if (f.device_count_call.code == 0) f.device_count = n;
    }
    auto get = cuda.sym<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
    auto name = cuda.sym<CUresult (*)(char*, int, CUdevice)>("cuDeviceGetName");
    auto mem = cuda.sym<CUresult (*)(std::size_t*, CUdevice)>("cuDeviceTotalMem_v2");
    auto attr = cuda.sym<CUresult (*)(int*, int, CUdevice)>("cuDeviceGetAttribute");
    auto bus = cuda.sym<CUresult (*)(char*, int, CUdevice)>("cuDeviceGetPCIBusId");
    auto retain = cuda.sym<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain");
    auto release = cuda.sym<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease_v2");
    for (int i = 0; i < f.device_count && i < 64 && get; ++i) {
      snapshot::CudaDevice d;
      d.index = i;
      CUdevice dev = 0;
      note_call("cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute");
      if (get(&dev, i) != 0) continue;
      char buf[256] = {};
      if (name && name(buf, sizeof buf, dev) == 0) d.name = buf;
      std::size_t bytes = 0;
      if (mem && mem(&bytes, dev) == 0) d.memory_total_bytes = bytes;
      const auto a = [&](int which) {
        int v = 0;
        return attr && attr(&v, which, dev) == 0 ? v : 0;
      };
      d.compute_capability = std::to_string(a(k_attr_cc_major)) + "." + std::to_string(a(k_attr_cc_minor));
      d.multiprocessors = a(k_attr_sm_count);
      d.clock_mhz = a(k_attr_clock) / 1000;             // kHz
      d.memory_clock_mhz = a(k_attr_mem_clock) / 1000;  // kHz
      d.memory_bus_width_bits = a(k_attr_bus_width);
      char pci[64] = {};
      if (bus && bus(pci, sizeof pci, dev) == 0) d.pci_bus_id = sysfs_bus_id(pci);
      if (retain) {
        CUcontext ctx = nullptr;
        note_call("cuDevicePrimaryCtxRetain");
        d.context = driver_call(cuda, retain(&ctx, dev));
        if (d.context.code == 0 && release) release(dev);
      }
      f.devices.push_back(std::move(d));
    }
  }
  return nlohmann::json(f).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// --- runtime API (cuda_runtime_api.h)
using cudaError_t = int;

CudaCall runtime_call(const Lib& rt, cudaError_t rc) {
  CudaCall c;
  c.code = rc;
  if (auto f = rt.sym<const char* (*)(cudaError_t)>("cudaGetErrorName")) c.name = f(rc) ? f(rc) : "";
  if (auto f = rt.sym<const char* (*)(cudaError_t)>("cudaGetErrorString")) c.message = f(rc) ? f(rc) : "";
  if (c.name.empty()) c.name = "cudaError " + std::to_string(rc);
  return c;
}

// Loads libcuda first, globally, so that the runtime's own dlopen("libcuda.so.1") finds it
// by its soname instead of searching (glibc reuses a loaded object with that soname).
bool preload(Lib& cuda, const std::string& libcuda, std::string& error) {
  if (libcuda.empty()) return true;
  if (!cuda.open(libcuda, RTLD_NOW | RTLD_GLOBAL)) {
    error = cuda.error();
    return false;
  }
  return true;
}

}  // namespace

std::string cudart_child(const std::string& cudart, const std::string& libcuda) {
  snapshot::CudartFacts f;
  Lib cuda, rt;
  std::string err;
  if (!preload(cuda, libcuda, err))
    return nlohmann::json{{"load_error", err}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!rt.open(cudart, RTLD_NOW | RTLD_LOCAL))
    return nlohmann::json{{"load_error", rt.error()}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
  return nlohmann::json(f).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// --- L5
using cublasHandle_t = void*;
using cublasStatus_t = int;
constexpr int k_h2d = 1, k_d2h = 2;
constexpr int k_cuda_r_32f = 0, k_cuda_r_16f = 2, k_cuda_r_16bf = 14, k_cublas_compute_32f = 68, k_gemm_default = -1;

std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// IEEE binary16 for values in [-1, 1] (no overflow, subnormals flushed).
std::uint16_t to_fp16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000;
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return static_cast<std::uint16_t>(sign);
  std::uint32_t mant = u & 0x7fffff;
  std::uint32_t h = sign | (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (h & 1))) ++h;
  return static_cast<std::uint16_t>(h);
}
float from_fp16(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1f;
  const std::uint32_t mant = h & 0x3ff;
  std::uint32_t u = sign;
  if (exp != 0) u |= ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Cuda {
  Lib cuda, rt, blas;
  cudaError_t (*set_device)(int) = nullptr;
  cudaError_t (*malloc_)(void**, std::size_t) = nullptr;
  cudaError_t (*free_)(void*) = nullptr;
  cudaError_t (*malloc_host)(void**, std::size_t) = nullptr;
  cudaError_t (*free_host)(void*) = nullptr;
  cudaError_t (*memcpy_)(void*, const void*, std::size_t, int) = nullptr;
  cudaError_t (*sync)() = nullptr;
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, int, int, int, int, int, const void*, const void*, int, int, const void*,
                            int, int, const void*, void*, int, int, int, int) = nullptr;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The turn to time copies: one byte in a pipe shared by the compute children.
class CopyTurn {
 public:
  CopyTurn(int read_fd, int write_fd, std::chrono::steady_clock::time_point give_up)
      : m_read(read_fd), m_write(write_fd), m_give_up(give_up) {}
  bool take() {
    if (m_read < 0) return false;
    note_call("waiting for the turn to time copies");
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(m_give_up - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{m_read, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char b = 0;
      if (::read(m_read, &b, 1) == 1) return m_held = true;
    }
  }
  void give_back() {
    if (m_held) (void)!::write(m_write, "t", 1);
    m_held = false;
  }
  ~CopyTurn() { give_back(); }
  CopyTurn(const CopyTurn&) = delete;
  CopyTurn& operator=(const CopyTurn&) = delete;

 private:
  int m_read, m_write;
  std::chrono::steady_clock::time_point m_give_up;
  bool m_held = false;
};

void copies(Cuda& c, snapshot::ComputeCheck& out, std::size_t bytes, CopyTurn& turn) {
  void* dev = nullptr;
  note_call("cudaMalloc");
  out.allocation = runtime_call(c.rt, c.malloc_(&dev, bytes));
  if (out.allocation.code != 0) return;
  std::vector<unsigned char> src(bytes), back(bytes);
  // A pattern no stuck bit or stale buffer reproduces (xorshift64, 8 bytes a step).
  std::uint64_t x = 0x9e3779b97f4a7c15u;
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(src.data() + i, &x, 8);
  }
  // Only the timed copies wait for their turn; the buffers are ready before.
  out.copies_timed_alone = turn.take();
  const auto timed = [&](const char* kind, void* dst, const void* s, int dir) {
    note_call("cudaMemcpy");
    c.sync();
    const auto t = std::chrono::steady_clock::now();
    const auto rc = c.memcpy_(dst, s, bytes, dir);
    c.sync();
    const double secs = seconds_since(t);
    snapshot::CopyCheck k{kind, bytes, rc == 0 && secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0, rc == 0};
    out.copies.push_back(k);
    return rc == 0;
  };
  timed("h2d_pageable", dev, src.data(), k_h2d);
  if (timed("d2h_pageable", back.data(), dev, k_d2h)) out.copies.back().matches = back == src;
  void* pinned_src = nullptr;
  void* pinned_back = nullptr;
  note_call("cudaMallocHost");
  if (c.malloc_host && c.malloc_host(&pinned_src, bytes) == 0 && c.malloc_host(&pinned_back, bytes) == 0) {
    std::memcpy(pinned_src, src.data(), bytes);
    std::memset(pinned_back, 0, bytes);
    timed("h2d_pinned", dev, pinned_src, k_h2d);
    if (timed("d2h_pinned", pinned_back, dev, k_d2h))
      out.copies.back().matches = std::memcmp(pinned_back, pinned_src, bytes) == 0;
  }
  if (pinned_src) c.free_host(pinned_src);
  if (pinned_back) c.free_host(pinned_back);
  c.free_(dev);
}

// C = A * B with column-major n x n matrices; inputs given as float, stored as dtype.
snapshot::GemmCheck gemm(Cuda& c, cublasHandle_t h, const std::string& dtype, int n, int timed_n) {
  snapshot::GemmCheck g{dtype, n, n, n, 0, 0, false, 0, timed_n, {}};
  const int type = dtype == "fp16" ? k_cuda_r_16f : dtype == "bf16" ? k_cuda_r_16bf : k_cuda_r_32f;
  const std::size_t elem = type == k_cuda_r_32f ? 4 : 2;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<float> a(nn), b(nn);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  // Store in the input type; the CPU reference uses exactly the values the GPU sees.
  std::vector<unsigned char> a_raw(nn * elem), b_raw(nn * elem);
  for (std::size_t i = 0; i < nn; ++i) {
    if (type == k_cuda_r_32f) {
      std::memcpy(&a_raw[i * 4], &a[i], 4);
      std::memcpy(&b_raw[i * 4], &b[i], 4);
    } else {
      const auto ha = type == k_cuda_r_16f ? to_fp16(a[i]) : to_bf16(a[i]);
      const auto hb = type == k_cuda_r_16f ? to_fp16(b[i]) : to_bf16(b[i]);
      std::memcpy(&a_raw[i * 2], &ha, 2);
      std::memcpy(&b_raw[i * 2], &hb, 2);
      a[i] = type == k_cuda_r_16f ? from_fp16(ha) : from_bf16(ha);
      b[i] = type == k_cuda_r_16f ? from_fp16(hb) : from_bf16(hb);
    }
  }
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  const auto fail = [&](CudaCall call) {
    g.status = std::move(call);
    if (da) c.free_(da);
    if (db) c.free_(db);
    if (dc) c.free_(dc);
    return g;
  };
  for (auto* p : {&da, &db})
    if (const auto rc = c.malloc_(p, nn * elem); rc != 0) return fail(runtime_call(c.rt, rc));
  if (const auto rc = c.malloc_(&dc, nn * 4); rc != 0) return fail(runtime_call(c.rt, rc));
  c.memcpy_(da, a_raw.data(), nn * elem, k_h2d);
  c.memcpy_(db, b_raw.data(), nn * elem, k_h2d);
  const float alpha = 1.0f, beta = 0.0f;
  note_call("cublasGemmEx");
  const auto st = c.gemm_ex(h, 0, 0, n, n, n, &alpha, da, type, n, db, type, n, &beta, dc, k_cuda_r_32f, n,
                            k_cublas_compute_32f, k_gemm_default);
  if (st != 0) return fail({st, "cublasStatus " + std::to_string(st), "cublasGemmEx failed"});
  std::vector<float> out(nn);
  if (const auto rc = c.memcpy_(out.data(), dc, nn * 4, k_d2h); rc != 0) return fail(runtime_call(c.rt, rc));
  // Reference in double; error bound: n products of values in [-1, 1], fp32 accumulation.
  double max_err = 0;
  for (int col = 0; col < n; ++col)
    for (int row = 0; row < n; ++row) {
      double ref = 0;
      for (int k = 0; k < n; ++k)
        ref += static_cast<double>(a[static_cast<std::size_t>(k) * n + row]) * b[static_cast<std::size_t>(col) * n + k];
      max_err = std::max(max_err, std::abs(ref - out[static_cast<std::size_t>(col) * n + row]));
    }
  g.max_abs_error = max_err;
  g.tolerance = 1e-5 * n;  // fp32 accumulation over n terms of magnitude <= 1
  g.passed = max_err <= g.tolerance;
  c.free_(da);
  c.free_(db);
  c.free_(dc);
  da = db = dc = nullptr;
  g.status = {0, "", ""};
  // Throughput: a larger product, timed after a warm-up.
  if (timed_n > 0) {
    const auto tn = static_cast<std::size_t>(timed_n) * static_cast<std::size_t>(timed_n);
    for (auto* p : {&da, &db})
      if (c.malloc_(p, tn * elem) != 0) return g;
    if (c.malloc_(&dc, tn * 4) != 0) return fail(g.status);
    const auto run = [&] {
      return c.gemm_ex(h, 0, 0, timed_n, timed_n, timed_n, &alpha, da, type, timed_n, db, type, timed_n, &beta, dc,
                       k_cuda_r_32f, timed_n, k_cublas_compute_32f, k_gemm_default);
    };
    run();
    c.sync();
    const int reps = 5;
    const auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) run();
    c.sync();
    const double secs = seconds_since(t);
    g.tflops = 2.0 * timed_n * static_cast<double>(timed_n) * timed_n * reps / secs / 1e12;
    c.free_(da);
    c.free_(db);
    c.free_(dc);
  }
  return g;
}

std::string compute_child(const ComputeJob& job, ComputeSizes sizes, CopyTurn& turn) {
  const auto& [libcuda, cudart, cublas, device, cc_major, cc_minor] = job;
  snapshot::ComputeCheck out;
  out.device = device;
  Cuda c;
  std::string err;
  if (!preload(c.cuda, libcuda, err))
    return nlohmann::json{{"load_error", err}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!c.rt.open(cudart, RTLD_NOW | RTLD_GLOBAL))
    return nlohmann::json{{"load_error", c.rt.error()}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  c.set_device = c.rt.sym<decltype(c.set_device)>("cudaSetDevice");
  c.malloc_ = c.rt.sym<decltype(c.malloc_)>("cudaMalloc");
  c.free_ = c.rt.sym<decltype(c.free_)>("cudaFree");
  c.malloc_host = c.rt.sym<decltype(c.malloc_host)>("cudaMallocHost");
  c.free_host = c.rt.sym<decltype(c.free_host)>("cudaFreeHost");
  c.memcpy_ = c.rt.sym<decltype(c.memcpy_)>("cudaMemcpy");
  c.sync = c.rt.sym<decltype(c.sync)>("cudaDeviceSynchronize");
  if (!c.set_device || !c.malloc_ || !c.free_ || !c.memcpy_ || !c.sync)
    return nlohmann::json{{"load_error", "the runtime lacks cudaMalloc/cudaMemcpy"}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  note_call("cudaSetDevice");
  out.allocation = runtime_call(c.rt, c.set_device(device));
  if (out.allocation.code != 0)
    return nlohmann::json(out).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  copies(c, out, sizes.copy_bytes, turn);
  turn.give_back();
  if (out.allocation.code != 0 || cublas.empty())
    return nlohmann::json(out).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!c.blas.open(cublas, RTLD_NOW | RTLD_LOCAL))
    return nlohmann::json{{"load_error", c.blas.error()}}.dump(-1, ' ', false,
                                                               nlohmann::json::error_handler_t::replace);
  c.create = c.blas.sym<decltype(c.create)>("cublasCreate_v2");
  c.destroy = c.blas.sym<decltype(c.destroy)>("cublasDestroy_v2");
  c.gemm_ex = c.blas.sym<decltype(c.gemm_ex)>("cublasGemmEx");
  if (!c.create || !c.gemm_ex)
    return nlohmann::json{{"load_error", "cuBLAS lacks cublasCreate_v2/cublasGemmEx"}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  cublasHandle_t h = nullptr;
  note_call("cublasCreate_v2");
  if (const auto st = c.create(&h); st != 0) {
    snapshot::GemmCheck g;
    g.dtype = "fp32";
    g.status = {st, "cublasStatus " + std::to_string(st), "cublasCreate failed"};
    out.gemms.push_back(g);
    return nlohmann::json(out).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const int cc = cc_major * 10 + cc_minor;
  out.gemms.push_back(gemm(c, h, "fp32", sizes.check_n, sizes.throughput_n));
  if (cc >= 53) out.gemms.push_back(gemm(c, h, "fp16", sizes.check_n, sizes.throughput_n));
  if (cc >= 80) out.gemms.push_back(gemm(c, h, "bf16", sizes.check_n, sizes.throughput_n));
  if (c.destroy) c.destroy(h);
  return nlohmann::json(out).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::vector<snapshot::ComputeCheck> run_compute(const std::vector<ComputeJob>& jobs, const ComputeSizes& sizes,
                                                std::chrono::milliseconds timeout) {
  int turn_fds[2] = {-1, -1};
  if (::pipe2(turn_fds, O_CLOEXEC | O_NONBLOCK) == 0) (void)!::write(turn_fds[1], "t", 1);
  // A GPU whose copy hangs keeps the turn: the others wait a share of the time, not all of it.
  const auto give_up = std::chrono::steady_clock::now() + timeout / (2 * std::max<std::size_t>(jobs.size(), 1));
  std::vector<ChildFn> fns;
  for (const auto& job : jobs)
    fns.emplace_back([&, job] {
      CopyTurn turn(turn_fds[0], turn_fds[1], give_up);
      return compute_child(job, sizes, turn);
    });
  const auto runs = run_in_children(fns, timeout, {turn_fds[0], turn_fds[1]});
  for (const int fd : turn_fds)
    if (fd >= 0) ::close(fd);
  std::vector<snapshot::ComputeCheck> out;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto check = parse_reply<snapshot::ComputeCheck>(runs[i]);
    check.device = jobs[i].device;
    out.push_back(std::move(check));
  }
  return out;
}

}  // namespace cudoctor::runtime
