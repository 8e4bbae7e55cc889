#include "cudoctor/probe/framework_libraries.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>

#include "cudoctor/elf/fatbin.hpp"
#include "cudoctor/sys/paths.hpp"

namespace cudoctor::probe {
namespace {

using snapshot::Framework;

bool exists(const sys::Sys& sys, const std::string& p) {
  return sys.stat(p).type != sys::FileType::missing;
}

// The copy of soname the environment ships: site-packages/nvidia/<component>/lib/<soname>,
// else beside the GPU library; "" none.
std::string bundled_copy(Context& ctx, const std::string& site, const Framework& fw, const std::string& soname) {
  const auto& sys = ctx.sys();
  if (const auto comps = ctx.list_optional(site + "/nvidia"))
    for (const auto& c : *comps)
      if (const auto p = site + "/nvidia/" + c + "/lib/" + soname; exists(sys, p)) return p;
  if (const auto p = sys::dirname(fw.gpu_library) + "/" + soname; exists(sys, p)) return p;
  return "";
}

// The CUDA libraries of the tree, as the loader resolves them.
void collect_libraries(Context& ctx, const ld::Tree& tree, const std::string& site, Framework& fw) {
  const auto& sys = ctx.sys();
  static const std::regex cuda_lib(
      R"(^lib(cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|cufft|cusparse|curand|cusolver|nvrtc|nvJitLink|cupti|nvToolsExt)\.so)");
  const auto same_file = [&](const std::string& a, const std::string& b) {
    return sys.canonical(a).value_or(a) == sys.canonical(b).value_or(b);
  };
  for (std::size_t i = 1; i < tree.objects.size(); ++i) {
    const auto& o = tree.objects[i];
    if (!o.found) {
      if (o.name != "libcuda.so.1") fw.missing.push_back(o.name);
      continue;
    }
    for (const auto& v : o.missing_versions) fw.missing_versions.push_back(v + " (needed by " + o.path + ")");
    if (!std::regex_search(o.name, cuda_lib)) continue;
    snapshot::FrameworkLibrary l{o.name, o.path, ld::to_string(o.lookup.rule), "", bundled_copy(ctx, site, fw, o.name)};
    // The copy the loader takes is the bundled one when it is the same file ($ORIGIN/../.. paths).
    if (!l.bundled.empty() && same_file(l.bundled, l.path)) l.bundled = l.path;
    const auto real = sys::basename(sys.canonical(o.path).value_or(o.path));
    if (const auto dot = real.find(".so."); dot != std::string::npos) l.version = real.substr(dot + 4);
    fw.libraries.push_back(std::move(l));
  }
  for (const auto& v : tree.objects[0].missing_versions)
    fw.missing_versions.push_back(v + " (needed by " + fw.gpu_library + ")");
}

// GPU architectures: the fatbins of the framework's own libraries, in numeric order.
void collect_archs(Context& ctx, Framework& fw) {
  const auto& sys = ctx.sys();
  const auto dir = sys::dirname(fw.gpu_library);
  std::set<std::string> sm, ptx;
  if (const auto names = ctx.list_optional(dir))
    for (const auto& n : *names) {
      if (n.find(".so") == std::string::npos) continue;
      const auto path = dir + "/" + n;
      if (sys.stat(path).type != sys::FileType::regular) continue;
      const auto blob = ctx.map_optional(path);
      if (!blob) continue;
      const auto elf = elf::parse_elf(blob->data(), blob->size());
      if (!elf) continue;
      const auto fb = elf::read_fatbin(*elf, blob->data(), blob->size());
      if (!fb || !*fb || blob->shrank()) continue;  // a library being replaced says nothing
      for (const auto& a : (*fb)->sm_archs()) sm.insert(a);
      for (const auto& a : (*fb)->ptx_archs()) ptx.insert(a);
    }
  fw.sm_archs.assign(sm.begin(), sm.end());
  fw.ptx_archs.assign(ptx.begin(), ptx.end());
  const auto by_arch = [](const std::string& a, const std::string& b) {
    const auto num = [](const std::string& s) { return std::atoi(s.c_str() + s.find('_') + 1); };
    return num(a) < num(b);
  };
  std::sort(fw.sm_archs.begin(), fw.sm_archs.end(), by_arch);
  std::sort(fw.ptx_archs.begin(), fw.ptx_archs.end(), by_arch);
}

}  // namespace

void resolve_framework(Context& ctx, ld::Resolver& resolver, const std::string& site, Framework& fw) {
  const auto tree = resolver.load(fw.gpu_library);
  if (!tree) {
    fw.error = tree.error();
    return;
  }
  collect_libraries(ctx, *tree, site, fw);
  collect_archs(ctx, fw);
}

std::string linked_cuda_major(const Framework& fw) {
  static const std::regex soname(R"(^lib(cudart|cublas)\.so\.([0-9]+)(\.0)?$)");
  std::vector<std::string> names = fw.missing;
  for (const auto& l : fw.libraries) names.push_back(l.soname);
  for (const char* lib : {"cudart", "cublas"})
    for (const auto& n : names) {
      std::smatch m;
      if (std::regex_match(n, m, soname) && m[1] == lib) return m[2];
    }
  return "";
}

}  // namespace cudoctor::probe
