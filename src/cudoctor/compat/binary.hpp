#pragma once
// CUDA binary compatibility: which of a program's kernels a GPU of a given compute capability
// can run, and how. The one place cudoctor answers "can these kernels run on this GPU"; elf/
// (fatbins read from files), kb/ (published arch lists), plan/ and rules/ all ask it.
// Pure: no I/O, no knowledge base.
//
// The rules, each from NVIDIA's documents:
// - A cubin for sm_XY runs on compute capability X.Z for every Z >= Y, and on no other major
//   (CUDA C++ Programming Guide, "Binary Compatibility"; so an sm_86 cubin runs on 8.9:
//   Ada GPU Compatibility Guide, 1.2).
// - An arch-specific cubin, sm_XYa, runs only on exactly X.Y (Programming Guide, "Feature
//   Availability": architecture-specific features are not forward compatible).
// - A family-specific cubin, sm_XYf, runs on the GPUs of its family with a compute capability
//   >= X.Y; a family is one major (Programming Guide, "Family-Specific Features", CUDA 12.9;
//   Blackwell Compatibility Guide: sm_100f runs on 10.0 and 10.3).
// - PTX for compute_XY is JIT-compiled by the driver for any compute capability >= X.Y, of any
//   major (Programming Guide, "PTX Compatibility"); compute_XYa only for X.Y, compute_XYf
//   within its family. JIT needs a driver whose CUDA version is at least the PTX's (it cannot
//   compile a newer PTX ISA: CUDA_ERROR_UNSUPPORTED_PTX_VERSION, which is also why
//   minor-version compatibility runs cubins but not newer PTX: CUDA Compatibility guide), and
//   is off when CUDA_DISABLE_PTX_JIT=1 (CUDA Environment Variables).
// The driver prefers a cubin to PTX, and among cubins the one closest to the GPU.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/util/version.hpp"

namespace cudoctor::compat {

// One nvcc code target: a real architecture (a cubin) or a virtual one (PTX).
struct Target {
  enum class Kind { cubin, ptx };
  Kind kind = Kind::cubin;
  int major = 0;
  int minor = 0;
  char variant = 0;  // 0 portable, 'a' architecture-specific, 'f' family-specific

  std::string name() const;  // "sm_90a", "compute_80"
  util::Version cc() const;  // 9.0
  bool operator==(const Target&) const = default;
};

// "sm_90", "sm_90a", "sm_100f", "sm_120", "compute_90", "compute_100a". nullopt for anything
// else ("sm_", "sm_9", "sm_90x", "compute_abc").
std::optional<Target> parse_target(std::string_view text);
// A compute capability as users write it, "8.9": major and minor, nothing more.
std::optional<util::Version> parse_cc(std::string_view text);
// A portable cubin or PTX target for a compute capability.
Target cubin_for(const util::Version& cc);
Target ptx_for(const util::Version& cc);

// Whether target t, alone, can run on compute capability cc (ignoring the driver's JIT).
bool target_fits(const Target& t, const util::Version& cc);

enum class How {
  none,              // nothing runs
  exact_cubin,       // a cubin built for exactly this compute capability
  compatible_cubin,  // a cubin of the same major and an older minor (or the family's)
  ptx_jit,           // only PTX, JIT-compiled by the driver when the program loads
};

struct Verdict {
  How how = How::none;
  std::optional<Target> via;         // the target the driver would load
  std::optional<Target> ptx_denied;  // PTX that would cover the GPU, when JIT is not possible
  bool runs() const { return how != How::none; }
  // "sm_86 cubin", "compute_90 PTX (JIT)", "" when nothing runs.
  std::string describe() const;
};

// Which of these targets runs on cc: the best cubin, else the newest fitting PTX when the
// caller says JIT is possible (the driver's CUDA is new enough and JIT is not disabled).
Verdict runs_on(std::span<const Target> targets, const util::Version& cc, bool jit_possible = true);

}  // namespace cudoctor::compat
