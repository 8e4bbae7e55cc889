#include <fmt/format.h>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

// Found as the dynamic loader would find them when a program dlopens them: through ld/,
// which reads /etc/ld.so.cache itself.

namespace cudoctor::probe {
namespace {

snapshot::DriverLibrary find_library(const sys::Sys& sys, ld::Resolver& resolver, const std::string& soname) {
  snapshot::DriverLibrary lib;
  lib.soname = soname;
  std::string found;
  const auto lookup = resolver.locate(soname, found);
  lib.searched = lookup.searched;
  for (const auto& r : lookup.rejected) lib.searched.push_back(r.path + " (passed over: " + r.why + ")");
  if (found.empty()) return lib;
  lib.path = found;
  lib.found_by = lookup.rule + (lookup.detail.empty() ? "" : ": " + lookup.detail);
  lib.real_path = sys.canonical(found).value_or(found);
  // NVIDIA names the real file after the driver version: libcuda.so.535.104.05.
  const auto stem = soname.substr(0, soname.find(".so") + 4);  // "libcuda.so."
  const auto real = sys::basename(lib.real_path);
  if (real.starts_with(stem)) {
    const auto v = real.substr(stem.size());
    if (const auto parsed = util::Version::parse(v); parsed && parsed->parts.size() >= 2) lib.version = v;
  }
  return lib;
}

}  // namespace

std::vector<snapshot::DriverLibrary> probe_driver_libraries(Context& ctx, const snapshot::HostFacts&) {
  const auto& sys = ctx.sys();
  ld::Resolver resolver(sys, ld::discover_config(sys, sys.env("LD_LIBRARY_PATH").value_or("")));
  return {find_library(sys, resolver, "libcuda.so.1"), find_library(sys, resolver, "libnvidia-ml.so.1")};
}

}  // namespace cudoctor::probe
