// L1: the unversioned libcuda.so that Triton links against and old bitsandbytes opens. The
// loader needs only libcuda.so.1; these two need the name without its version as well.
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/l1_fixes.hpp"
#include "cudoctor/rules/l1_view.hpp"

namespace cudoctor::rules::l1 {
namespace {

constexpr const char* k_wsl_lib = "/usr/lib/wsl/lib";
// A directory of our own for the link under WSL, whose /usr/lib/wsl/lib is mounted read-only.
constexpr const char* k_wsl_link_dir = "/usr/local/lib/wsl-libcuda";

}  // namespace

void unversioned_libcuda_rule(const View& v, std::vector<Finding>& out) {
  const auto* cuda = v.library("libcuda.so.1");
  if (!cuda) return;  // no driver library at all is driver-library-missing's
  const auto& dev = v.snap.driver.libcuda_unversioned;
  std::vector<std::string> needs;  // "triton 3.1.0 in /opt/venv", …
  bool triton = false, bnb = false;
  for (const auto& env : v.snap.python.envs)
    for (const auto& p : env.libcuda_users) {
      const bool is_triton = p.name.find("triton") != std::string::npos;
      // Triton needs the link beside libcuda.so.1; bitsandbytes needs dlopen to find one.
      if (is_triton ? v.snap.driver.libcuda_unversioned_beside : !dev.path.empty()) continue;
      (is_triton ? triton : bnb) = true;
      needs.push_back(fmt::format("{} {} in {} ({})", p.name, p.version, env.prefix, p.source));
    }
  if (needs.empty()) return;
  const auto dir = cuda->path.substr(0, cuda->path.rfind('/'));  // the loader gives absolute paths
  auto f = make_finding("libcuda-unversioned-missing");
  f.title = fmt::format("No libcuda.so beside {}: {} will fail", cuda->path,
                        triton && bnb ? "Triton (torch.compile) and bitsandbytes"
                        : triton      ? "Triton (and torch.compile, which uses it)"
                                      : "bitsandbytes");
  f.detail =
      "Programs load the driver as libcuda.so.1, which is here. Triton compiles its launcher with -lcuda against "
      "the directories `ldconfig -p` lists libcuda.so.1 in, and the linker looks for libcuda.so there (\"cannot "
      "find -lcuda\", or Triton's \"libcuda.so cannot found!\"); bitsandbytes' old CUDA set-up opens libcuda.so "
      "by that name. The link without the version is what they need.";
  f.evidence.push_back(fmt::format("libcuda.so.1: {} ({})", cuda->path, cuda->found_by));
  f.evidence.push_back(dev.path.empty()
                           ? "libcuda.so: not found by the loader"
                           : fmt::format("libcuda.so: {} ({}), not beside libcuda.so.1", dev.path, dev.found_by));
  for (const auto& n : needs) f.evidence.push_back("needs libcuda.so: " + n);
  if (v.wsl2 && dir == k_wsl_lib) {
    f.fix = {fmt::format("{} is Windows' read-only driver store: make the link in a directory of your own, point "
                         "Triton at it with TRITON_LIBCUDA_PATH{}.",
                         k_wsl_lib, bnb ? " and bitsandbytes with LD_LIBRARY_PATH" : ""),
             {fixes::as_root(v.m, fmt::format("mkdir -p {}", k_wsl_link_dir)),
              fixes::as_root(v.m, fmt::format("ln -sf {}/libcuda.so.1 {}/libcuda.so", k_wsl_lib, k_wsl_link_dir)),
              fmt::format("echo 'export TRITON_LIBCUDA_PATH={}' >> ~/.bashrc", k_wsl_link_dir)},
             {fmt::format("ls -l {}/libcuda.so*", k_wsl_lib)}};
    if (bnb)
      f.fix.commands.push_back(
          fmt::format("echo 'export LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH:{}\"' >> ~/.bashrc", k_wsl_link_dir));
    f.fix.commands.push_back("source ~/.bashrc");
  } else {
    f.fix = {std::string(v.in_container ? "The link lasts until the container is recreated; an image step (RUN ln "
                                          "-s …) makes it permanent. "
                                        : "") +
                 "Make the link next to libcuda.so.1 and refresh the loader's cache.",
             {fixes::as_root(v.m, fmt::format("ln -s libcuda.so.1 {}", shell_quote(dir + "/libcuda.so"))),
              fixes::as_root(v.m, "ldconfig")},
             {"ldconfig -p | grep 'libcuda\\.so '"}};
  }
  out.push_back(std::move(f));
}

}  // namespace cudoctor::rules::l1
