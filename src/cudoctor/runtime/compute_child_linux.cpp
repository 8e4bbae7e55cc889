#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "cudoctor/runtime/cuda_child.hpp"
#include "cudoctor/runtime/cudart_linux.hpp"
#include "cudoctor/snapshot/snapshot_json.hpp"
#include "cudoctor/util/half.hpp"

namespace cudoctor::runtime {
namespace {

using snapshot::CudaCall;

// cuda_runtime_api.h, library_types.h and cublas_api.h.
using cublasHandle_t = void*;
using cublasStatus_t = int;
constexpr int k_h2d = 1, k_d2h = 2;
constexpr int k_cuda_r_32f = 0, k_cuda_r_16f = 2, k_cuda_r_16bf = 14, k_cublas_compute_32f = 68, k_gemm_default = -1;

// The runtime and cuBLAS entry points the check calls.
struct Cuda {
  Library cuda, rt, blas;
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

// A pattern no stuck bit or stale buffer reproduces (xorshift64, 8 bytes a step).
std::vector<unsigned char> copy_pattern(std::size_t bytes) {
  std::vector<unsigned char> src(bytes);
  std::uint64_t x = 0x9e3779b97f4a7c15u;
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(src.data() + i, &x, 8);
  }
  return src;
}

// One timed cudaMemcpy, recorded in out.copies; true when it succeeded.
bool timed_copy(Cuda& c, snapshot::ComputeCheck& out, const char* kind, void* dst, const void* src, std::size_t bytes,
                int dir) {
  note_call("cudaMemcpy");
  c.sync();
  const auto t = std::chrono::steady_clock::now();
  const auto rc = c.memcpy_(dst, src, bytes, dir);
  c.sync();
  const double secs = seconds_since(t);
  out.copies.push_back({kind, bytes, rc == 0 && secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0, rc == 0});
  return rc == 0;
}

// The pinned pair of copies, when pinned memory can be had.
void pinned_copies(Cuda& c, snapshot::ComputeCheck& out, void* dev, const std::vector<unsigned char>& src) {
  const std::size_t bytes = src.size();
  void* pinned_src = nullptr;
  void* pinned_back = nullptr;
  note_call("cudaMallocHost");
  if (c.malloc_host && c.malloc_host(&pinned_src, bytes) == 0 && c.malloc_host(&pinned_back, bytes) == 0) {
    std::memcpy(pinned_src, src.data(), bytes);
    std::memset(pinned_back, 0, bytes);
    timed_copy(c, out, "h2d_pinned", dev, pinned_src, bytes, k_h2d);
    if (timed_copy(c, out, "d2h_pinned", pinned_back, dev, bytes, k_d2h))
      out.copies.back().matches = std::memcmp(pinned_back, pinned_src, bytes) == 0;
  }
  if (pinned_src) c.free_host(pinned_src);
  if (pinned_back) c.free_host(pinned_back);
}

void copies(Cuda& c, snapshot::ComputeCheck& out, std::size_t bytes, CopyTurn& turn) {
  void* dev = nullptr;
  note_call("cudaMalloc");
  out.allocation = runtime_call(c.rt, c.malloc_(&dev, bytes));
  if (out.allocation.code != 0) return;
  const auto src = copy_pattern(bytes);
  std::vector<unsigned char> back(bytes);
  // Only the timed copies wait for their turn; the buffers are ready before.
  out.copies_timed_alone = turn.take();
  timed_copy(c, out, "h2d_pageable", dev, src.data(), bytes, k_h2d);
  if (timed_copy(c, out, "d2h_pageable", back.data(), dev, bytes, k_d2h)) out.copies.back().matches = back == src;
  pinned_copies(c, out, dev, src);
  c.free_(dev);
}

// The two n x n inputs of a product: as stored for the GPU (in the input type) and as the
// floats they stand for, which the CPU reference uses (exactly the values the GPU sees).
struct Operands {
  int type = k_cuda_r_32f;
  std::size_t elem = 4;  // bytes per stored element
  std::vector<float> a, b;
  std::vector<unsigned char> a_raw, b_raw;
};

int cuda_type(const std::string& dtype) {
  return dtype == "fp16" ? k_cuda_r_16f : dtype == "bf16" ? k_cuda_r_16bf : k_cuda_r_32f;
}

// Stores v in the input type at raw; returns the float the stored value stands for.
float store(int type, float v, unsigned char* raw) {
  if (type == k_cuda_r_32f) {
    std::memcpy(raw, &v, 4);
    return v;
  }
  const auto h = type == k_cuda_r_16f ? util::to_fp16(v) : util::to_bf16(v);
  std::memcpy(raw, &h, 2);
  return type == k_cuda_r_16f ? util::from_fp16(h) : util::from_bf16(h);
}

Operands make_operands(int type, int n) {
  Operands o;
  o.type = type;
  o.elem = type == k_cuda_r_32f ? 4 : 2;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  o.a.resize(nn);
  o.b.resize(nn);
  for (auto& x : o.a) x = dist(rng);
  for (auto& x : o.b) x = dist(rng);
  o.a_raw.resize(nn * o.elem);
  o.b_raw.resize(nn * o.elem);
  for (std::size_t i = 0; i < nn; ++i) {
    o.a[i] = store(type, o.a[i], &o.a_raw[i * o.elem]);
    o.b[i] = store(type, o.b[i], &o.b_raw[i * o.elem]);
  }
  return o;
}

// Device memory for A, B (elem bytes an element) and C (fp32), freed on destruction.
struct DeviceOperands {
  Cuda& c;
  void *a = nullptr, *b = nullptr, *out = nullptr;
  explicit DeviceOperands(Cuda& cuda) : c(cuda) {}
  ~DeviceOperands() {
    for (void* p : {a, b, out})
      if (p) c.free_(p);
  }
  DeviceOperands(const DeviceOperands&) = delete;
  DeviceOperands& operator=(const DeviceOperands&) = delete;
  // The first failing cudaMalloc's code, 0 when all three succeeded.
  cudaError_t allocate(std::size_t nn, std::size_t elem) {
    for (auto* p : {&a, &b})
      if (const auto rc = c.malloc_(p, nn * elem); rc != 0) return rc;
    return c.malloc_(&out, nn * 4);
  }
};

cublasStatus_t run_gemm(Cuda& c, cublasHandle_t h, const DeviceOperands& d, int type, int n) {
  const float alpha = 1.0f, beta = 0.0f;
  return c.gemm_ex(h, 0, 0, n, n, n, &alpha, d.a, type, n, d.b, type, n, &beta, d.out, k_cuda_r_32f, n,
                   k_cublas_compute_32f, k_gemm_default);
}

// The largest difference between the GPU's C (column-major) and a CPU product in double.
double max_error(const Operands& o, const std::vector<float>& out, int n) {
  const auto at = [n](int row, int col) { return static_cast<std::size_t>(col) * static_cast<std::size_t>(n) + row; };
  double max_err = 0;
  for (int col = 0; col < n; ++col)
    for (int row = 0; row < n; ++row) {
      double ref = 0;
      for (int k = 0; k < n; ++k) ref += static_cast<double>(o.a[at(row, k)]) * o.b[at(k, col)];
      max_err = std::max(max_err, std::abs(ref - out[at(row, col)]));
    }
  return max_err;
}

// C = A * B on the GPU, compared with the CPU; g.status is the first failing call.
void check_product(Cuda& c, cublasHandle_t h, snapshot::GemmCheck& g, int type, int n) {
  const auto o = make_operands(type, n);
  const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  DeviceOperands d(c);
  if (const auto rc = d.allocate(nn, o.elem); rc != 0) {
    g.status = runtime_call(c.rt, rc);
    return;
  }
  c.memcpy_(d.a, o.a_raw.data(), nn * o.elem, k_h2d);
  c.memcpy_(d.b, o.b_raw.data(), nn * o.elem, k_h2d);
  note_call("cublasGemmEx");
  if (const auto st = run_gemm(c, h, d, type, n); st != 0) {
    g.status = {st, "cublasStatus " + std::to_string(st), "cublasGemmEx failed"};
    return;
  }
  std::vector<float> out(nn);
  if (const auto rc = c.memcpy_(out.data(), d.out, nn * 4, k_d2h); rc != 0) {
    g.status = runtime_call(c.rt, rc);
    return;
  }
  g.max_abs_error = max_error(o, out, n);
  g.tolerance = 1e-5 * n;  // fp32 accumulation over n terms of magnitude <= 1
  g.passed = g.max_abs_error <= g.tolerance;
  g.status = {0, "", ""};
}

// TFLOP/s of an n x n x n product, timed after a warm-up; 0 when its memory cannot be had.
double time_product(Cuda& c, cublasHandle_t h, int type, std::size_t elem, int n) {
  DeviceOperands d(c);
  if (d.allocate(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), elem) != 0) return 0;
  run_gemm(c, h, d, type, n);
  c.sync();
  const int reps = 5;
  const auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) run_gemm(c, h, d, type, n);
  c.sync();
  const double secs = seconds_since(t);
  return 2.0 * n * static_cast<double>(n) * n * reps / secs / 1e12;
}

// C = A * B with column-major n x n matrices; inputs given as float, stored as dtype. Then
// the throughput of a larger product (timed_n 0: none).
snapshot::GemmCheck gemm(Cuda& c, cublasHandle_t h, const std::string& dtype, int n, int timed_n) {
  snapshot::GemmCheck g{dtype, n, n, n, 0, 0, false, 0, timed_n, {}};
  const int type = cuda_type(dtype);
  check_product(c, h, g, type, n);
  if (g.status.code == 0 && timed_n > 0) g.tflops = time_product(c, h, type, type == k_cuda_r_32f ? 4 : 2, timed_n);
  return g;
}

// The runtime's entry points; an error text when one the check needs is missing.
std::string bind_runtime(Cuda& c) {
  c.set_device = c.rt.sym<decltype(c.set_device)>("cudaSetDevice");
  c.malloc_ = c.rt.sym<decltype(c.malloc_)>("cudaMalloc");
  c.free_ = c.rt.sym<decltype(c.free_)>("cudaFree");
  c.malloc_host = c.rt.sym<decltype(c.malloc_host)>("cudaMallocHost");
  c.free_host = c.rt.sym<decltype(c.free_host)>("cudaFreeHost");
  c.memcpy_ = c.rt.sym<decltype(c.memcpy_)>("cudaMemcpy");
  c.sync = c.rt.sym<decltype(c.sync)>("cudaDeviceSynchronize");
  if (!c.set_device || !c.malloc_ || !c.free_ || !c.memcpy_ || !c.sync)
    return "the runtime lacks cudaMalloc/cudaMemcpy";
  return "";
}

// cuBLAS's entry points; an error text when one the check needs is missing.
std::string bind_cublas(Cuda& c) {
  c.create = c.blas.sym<decltype(c.create)>("cublasCreate_v2");
  c.destroy = c.blas.sym<decltype(c.destroy)>("cublasDestroy_v2");
  c.gemm_ex = c.blas.sym<decltype(c.gemm_ex)>("cublasGemmEx");
  if (!c.create || !c.gemm_ex) return "cuBLAS lacks cublasCreate_v2/cublasGemmEx";
  return "";
}

// The GEMMs the device's compute capability supports, into out.gemms.
void gemms(Cuda& c, snapshot::ComputeCheck& out, const ComputeJob& job, const ComputeSizes& sizes) {
  cublasHandle_t h = nullptr;
  note_call("cublasCreate_v2");
  if (const auto st = c.create(&h); st != 0) {
    snapshot::GemmCheck g;
    g.dtype = "fp32";
    g.status = {st, "cublasStatus " + std::to_string(st), "cublasCreate failed"};
    out.gemms.push_back(g);
    return;
  }
  const int cc = job.cc_major * 10 + job.cc_minor;
  out.gemms.push_back(gemm(c, h, "fp32", sizes.check_n, sizes.throughput_n));
  if (cc >= 53) out.gemms.push_back(gemm(c, h, "fp16", sizes.check_n, sizes.throughput_n));
  if (cc >= 80) out.gemms.push_back(gemm(c, h, "bf16", sizes.check_n, sizes.throughput_n));
  if (c.destroy) c.destroy(h);
}

std::string compute_child(const ComputeJob& job, const ComputeSizes& sizes, CopyTurn& turn) {
  snapshot::ComputeCheck out;
  out.device = job.device;
  Cuda c;
  std::string err;
  if (!preload_libcuda(c.cuda, job.libcuda, err)) return load_error_reply(err);
  if (!c.rt.open(job.cudart, RTLD_NOW | RTLD_GLOBAL)) return load_error_reply(c.rt.error());
  if (err = bind_runtime(c); !err.empty()) return load_error_reply(err);
  note_call("cudaSetDevice");
  out.allocation = runtime_call(c.rt, c.set_device(job.device));
  if (out.allocation.code != 0) return reply(out);
  copies(c, out, sizes.copy_bytes, turn);
  turn.give_back();
  if (out.allocation.code != 0 || job.cublas.empty()) return reply(out);
  if (!c.blas.open(job.cublas, RTLD_NOW | RTLD_LOCAL)) return load_error_reply(c.blas.error());
  if (err = bind_cublas(c); !err.empty()) return load_error_reply(err);
  gemms(c, out, job, sizes);
  return reply(out);
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
