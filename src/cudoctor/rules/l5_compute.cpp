// L5: the computation check on each GPU: copies there and back, cuBLAS products against the
// CPU's, and the copy bandwidth against what the PCIe link allows.
#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l4_view.hpp"

namespace cudoctor::rules::l4 {
namespace {

using snapshot::ComputeCheck;

// Usable bandwidth of a PCIe link in GB/s per direction: what a lane of its generation carries
// after the line coding (pcie.json) times the lanes; 0 when unknown.
double pcie_gb_per_s(const kb::KnowledgeBase& kb, int generation, int lanes) {
  const auto* g = kb.pcie_generation(generation);
  return g && lanes > 0 ? g->lane_gb_per_s * lanes : 0;
}

void bandwidth_rule(const view::Machine& m, const kb::KnowledgeBase& kb, const ComputeCheck& c,
                    std::vector<Finding>& out) {
  const auto& s = m.snap;
  const snapshot::NvmlGpu* nvml = nullptr;
  for (const auto& g : s.gpus)
    if (g.nvml && g.nvml->index == c.device) nvml = &*g.nvml;
  // Copies that shared the bus with another GPU's say nothing of this GPU's link.
  if (!nvml || !c.copies_timed_alone) return;
  const double link = pcie_gb_per_s(kb, nvml->pcie_gen_max, nvml->pcie_width_max);
  double best = 0;
  for (const auto& k : c.copies)
    if (k.kind.ends_with("pinned")) best = std::max(best, k.gb_per_s);
  // Pinned copies of 64 MiB reach 75-90 % of the link on a healthy machine; under 40 %
  // the link trained narrower or slower than it can, or something else holds the bus.
  if (link <= 0 || best <= 0 || best >= 0.4 * link) return;
  auto f = make_finding("copy-bandwidth-low");
  f.title = fmt::format("GPU {}: pinned copies reach {:.1f} GB/s of the {:.1f} GB/s a PCIe gen {} x{} link allows",
                        c.device, best, link, nvml->pcie_gen_max, nvml->pcie_width_max);
  f.detail =
      "The link may be running below its capability (a riser, a slot wired x8 or x4, a link that trained down), "
      "or another device shares it.";
  f.evidence.push_back(fmt::format("NVML: PCIe gen {} x{} now, gen {} x{} at most", nvml->pcie_gen_current,
                                   nvml->pcie_width_current, nvml->pcie_gen_max, nvml->pcie_width_max));
  f.fix = {"Check the link under load and the slot the GPU sits in.", {}, {}};
  add_smi(m, f.fix.checks, "-q -d PCIE");
  if (m.has_tool("lspci"))
    f.fix.checks.push_back(fixes::as_root(m, "lspci -vv -d 10de:") + " | grep -i -e lnkcap -e lnksta");
  out.push_back(std::move(f));
}

// GPU memory could not be allocated: out of memory (2) or another error.
void allocation_rule(const view::Machine& m, const kb::KnowledgeBase& kb, const ComputeCheck& c, const std::string& gpu,
                     std::vector<Finding>& out) {
  const auto& s = m.snap;
  auto f = make_finding(c.allocation.code == 2 ? FindingId("gpu-out-of-memory") : FindingId("compute-failed"));
  f.title =
      fmt::format("{}: {} MiB cannot be allocated: {}", gpu, (c.copies.empty() ? 64u : c.copies.front().bytes >> 20),
                  call_text(c.allocation, kb, "runtime"));
  for (const auto& g : s.gpus)
    if (g.nvml && g.nvml->index == c.device)
      f.evidence.push_back(fmt::format("NVML: {:.1f} of {:.1f} GiB in use",
                                       static_cast<double>(g.nvml->memory_used_bytes) / (1 << 30),
                                       static_cast<double>(g.nvml->memory_total_bytes) / (1 << 30)));
  f.fix = {"See which processes hold the GPU's memory.", {}, {}};
  add_smi(m, f.fix.checks, "--query-compute-apps=pid,process_name,used_memory --format=csv");
  out.push_back(std::move(f));
}

// Copies that came back changed and GEMMs that failed or are wrong. Returns whether any did.
bool correctness_rules(const view::Machine& m, const ComputeCheck& c, const std::string& gpu,
                       std::vector<Finding>& out) {
  bool bad = false;
  for (const auto& k : c.copies)
    if (!k.matches && k.kind.starts_with("d2h")) {
      auto f = make_finding("copy-corrupted");
      f.title = fmt::format("{}: {} MiB copied to the GPU and back ({}) came back changed", gpu, k.bytes >> 20, k.kind);
      f.detail = "Host-device transfers corrupt data: a failing GPU, its memory, or the PCIe link.";
      f.fix = {"Check for Xid and PCIe errors; run the GPU's memory test.", {}, {kernel_log(m, "-e xid -e aer")}};
      out.push_back(std::move(f));
      bad = true;
    }
  for (const auto& g : c.gemms) {
    if (g.status.code > 0) {
      auto f = make_finding("gemm-failed");
      f.title = fmt::format("{}: {} GEMM fails: {} {}", gpu, g.dtype, g.status.name, g.status.message);
      f.evidence.push_back(fmt::format("cuBLAS: {}", c.cublas));
      out.push_back(std::move(f));
      bad = true;
    } else if (!g.passed) {
      auto f = make_finding("gemm-wrong-result");
      f.title =
          fmt::format("{}: {} GEMM is wrong by {:.3g} (tolerance {:.3g})", gpu, g.dtype, g.max_abs_error, g.tolerance);
      f.detail = fmt::format(
          "A {}x{}x{} product of values in [-1, 1] differs from the CPU's by more than fp32 rounding "
          "allows: a faulty GPU, a broken library, or a math mode that changes results.",
          g.m, g.n, g.k);
      f.evidence.push_back(fmt::format("cuBLAS: {}", c.cublas));
      f.fix = {"Check NVIDIA_TF32_OVERRIDE and CUBLAS_* variables, then the GPU (Xid errors, nvidia-smi -q -d ECC).",
               {},
               {"env | grep -e TF32 -e CUBLAS"}};
      add_smi(m, f.fix.checks, "-q -d ECC");
      out.push_back(std::move(f));
      bad = true;
    }
  }
  return bad;
}

// Everything matched: the rates measured.
void compute_ok_rule(const ComputeCheck& c, const std::string& gpu, std::vector<Finding>& out) {
  auto f = make_finding("compute-ok");
  std::string copies, gemms;
  for (const auto& k : c.copies)
    copies += fmt::format("{}{} {:.1f} GB/s", copies.empty() ? "" : ", ", k.kind, k.gb_per_s);
  for (const auto& g : c.gemms)
    gemms += fmt::format("{}{} {:.1f} TFLOP/s", gemms.empty() ? "" : ", ", g.dtype, g.tflops);
  // A GEMM runs only with a cuBLAS; without one the title says so instead of "match ()".
  const auto gemm_text = !c.gemms.empty()   ? fmt::format("GEMMs match the CPU ({})", gemms)
                         : c.cublas.empty() ? std::string("GEMMs not run: no cuBLAS found")
                                            : fmt::format("GEMMs not run: {} ran none", c.cublas);
  f.title = fmt::format("{}: {}; {}", gpu, c.copies.empty() ? "no copies ran" : "copies match", gemm_text);
  f.evidence.push_back("copies: " + copies);
  for (const auto& g : c.gemms)
    f.evidence.push_back(fmt::format("{} {}x{}x{}: max error {:.3g} (tolerance {:.3g}); {:.1f} TFLOP/s at n={}",
                                     g.dtype, g.m, g.n, g.k, g.max_abs_error, g.tolerance, g.tflops,
                                     g.throughput_size));
  f.evidence.push_back(fmt::format("libraries: {}, {}", c.cudart, c.cublas.empty() ? "no cuBLAS" : c.cublas));
  out.push_back(std::move(f));
}

void one_compute(const view::Machine& m, const kb::KnowledgeBase& kb, const ComputeCheck& c,
                 std::vector<Finding>& out) {
  const auto gpu = fmt::format("GPU {}", c.device);
  if (c.outcome.status != snapshot::ChildStatus::ok) {
    auto f = make_finding("compute-failed");
    f.title = outcome_title(c.outcome, "The computation check on " + gpu, c.cudart);
    f.evidence.push_back(fmt::format("child process: {} after {:.2f} s: {}", snapshot::to_string(c.outcome.status),
                                     c.outcome.seconds, c.outcome.message));
    out.push_back(std::move(f));
    return;
  }
  if (c.allocation.code != 0) {
    allocation_rule(m, kb, c, gpu, out);
    return;
  }
  if (correctness_rules(m, c, gpu, out)) return;
  bandwidth_rule(m, kb, c, out);
  compute_ok_rule(c, gpu, out);
}

}  // namespace

void compute_rules(const view::Machine& m, const kb::KnowledgeBase& kb, std::vector<Finding>& out) {
  for (const auto& c : m.snap.runtime.compute) one_compute(m, kb, c, out);
}

}  // namespace cudoctor::rules::l4
