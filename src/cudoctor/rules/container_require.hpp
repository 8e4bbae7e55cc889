#pragma once
// The requirement language of NVIDIA's container images (NVIDIA_REQUIRE_CUDA and every other
// NVIDIA_REQUIRE_* variable), evaluated as libnvidia-container's nvidia-container-cli does
// before it starts a container (src/cli/dsl.c, src/cli/configure.c): expressions separated by
// spaces are alternatives, those joined by commas must all hold; each is NAME OP VALUE with
// NAME one of cuda (the driver's CUDA version), driver (the kernel module's version), arch
// (the GPU's compute capability), brand (the GPU's brand, compared in any case) and OP one of
// = != < <= > >=. Versions compare number by number, trailing zeros ignored. Pure.
#include <optional>
#include <string>
#include <string_view>

#include "cudoctor/util/version.hpp"

namespace cudoctor::rules {

// What the requirement is judged against; nullopt or "" where this machine does not say, in
// which case an expression on it is neither met nor failed but unknown.
struct RequireFacts {
  std::optional<util::Version> cuda;    // the newest CUDA the host's driver supports
  std::optional<util::Version> driver;  // the host's kernel module
  std::optional<util::Version> arch;    // the GPU's compute capability
  std::string brand;                    // "geforce", "tesla", …
};

enum class Met { yes, no, unknown };

struct RequireVerdict {
  bool valid = true;      // false: nvidia-container-cli rejects it ("invalid expression")
  Met met = Met::yes;     // all alternatives failed (no), one holds (yes), or none fails for sure (unknown)
  std::string first;      // the first alternative, which the toolkit names when none holds
  std::string undecided;  // the first alternative that may hold, when met is unknown
};

RequireVerdict evaluate_require(std::string_view predicate, const RequireFacts& facts);

// Go's strconv.ParseBool, as the toolkit reads NVIDIA_DISABLE_REQUIRE: nullopt for anything else.
std::optional<bool> parse_go_bool(std::string_view s);

}  // namespace cudoctor::rules
