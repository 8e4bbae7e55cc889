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

// One CUDA library as the loader resolved it, with the environment's own copy and its version.
snapshot::FrameworkLibrary library_entry(Context& ctx, const std::string& site, const Framework& fw,
                                         const std::string& soname, const std::string& path, ld::Rule rule) {
  const auto& sys = ctx.sys();
  snapshot::FrameworkLibrary l{soname, path, ld::to_string(rule), "", bundled_copy(ctx, site, fw, soname)};
  // The copy the loader takes is the bundled one when it is the same file ($ORIGIN/../.. paths).
  if (!l.bundled.empty() && sys.canonical(l.bundled).value_or(l.bundled) == sys.canonical(path).value_or(path))
    l.bundled = l.path;
  const auto real = sys::basename(sys.canonical(path).value_or(path));
  if (const auto dot = real.find(".so."); dot != std::string::npos) l.version = real.substr(dot + 4);
  return l;
}

// The sonames the framework's GPU library opens at run time, by the model the caller gave:
// for its name and CUDA major, "{cudnn}" replaced by the cuDNN major its build names.
std::vector<std::string> framework_opens(const Context& ctx, const Framework& fw) {
  const auto& by = ctx.run_time_opens().by_framework;
  const auto it = by.find(fw.name + " " + std::to_string(std::atoi(fw.cuda.c_str())));
  if (it == by.end()) return {};
  const int cudnn = std::atoi(fw.cudnn.c_str());
  std::vector<std::string> out;
  for (auto s : it->second) {
    if (const auto at = s.find("{cudnn}"); at != std::string::npos) {
      if (cudnn <= 0) continue;  // the build names no cuDNN: nothing to look for
      s.replace(at, 7, std::to_string(cudnn));
    }
    out.push_back(std::move(s));
  }
  return out;
}

// One library opened at run time by the tree's object `requester`: found, it joins libraries
// (and may open others in turn); else missing.
void open_one(Context& ctx, ld::Resolver& resolver, const ld::Tree& tree, int requester, const std::string& site,
              const std::string& soname, bool beside, Framework& fw,
              std::vector<std::pair<std::string, std::string>>& opened) {
  if (std::find(fw.dlopened.begin(), fw.dlopened.end(), soname) != fw.dlopened.end()) return;
  const auto& opener = tree.objects[static_cast<std::size_t>(requester)].path;
  fw.dlopened.push_back(soname);
  const auto loaded = std::find_if(tree.objects.begin(), tree.objects.end(),
                                   [&](const ld::Object& o) { return o.name == soname && o.found; });
  if (loaded != tree.objects.end()) {  // a DT_NEEDED of the tree already: dlopen returns that one
    fw.opened.push_back({soname, opener, loaded->path, ld::to_string(loaded->lookup.rule)});
    return;
  }
  std::string found;
  auto lookup = resolver.locate_from(tree, requester, soname, found);
  std::string rule = found.empty() ? "" : ld::to_string(lookup.rule);
  if (const auto own = sys::dirname(opener) + "/" + soname;
      found.empty() && beside && ctx.sys().stat(own).type != sys::FileType::missing) {
    found = own;
    rule = "beside its opener";
  }
  fw.opened.push_back({soname, opener, found, rule});
  if (found.empty()) {
    fw.missing.push_back(soname);
    return;
  }
  fw.libraries.push_back(library_entry(ctx, site, fw, soname, found, lookup.rule));
  if (rule == "beside its opener") fw.libraries.back().rule = rule;
  opened.emplace_back(soname, found);
}

// The libraries the framework opens at run time, searched as dlopen from their opener: its GPU
// library's, then what each library loaded opens itself (cuDNN its sub-libraries), once each.
void collect_dlopened(Context& ctx, ld::Resolver& resolver, const ld::Tree& tree, const std::string& site,
                      Framework& fw) {
  const auto& by_library = ctx.run_time_opens().by_library;
  std::vector<std::pair<std::string, std::string>> opened;  // (soname, path) found by dlopen
  for (const auto& soname : framework_opens(ctx, fw)) open_one(ctx, resolver, tree, 0, site, soname, false, fw, opened);
  // Openers in the tree are searched from their place in it; those dlopen found, from their own.
  for (std::size_t i = 0; i < tree.objects.size(); ++i) {
    const auto it = by_library.find(tree.objects[i].name);
    if (it == by_library.end() || !tree.objects[i].found) continue;
    for (const auto& soname : it->second.sonames)
      open_one(ctx, resolver, tree, static_cast<int>(i), site, soname, it->second.beside_opener, fw, opened);
  }
  for (std::size_t k = 0; k < opened.size(); ++k) {
    const auto it = by_library.find(opened[k].first);
    if (it == by_library.end()) continue;
    const auto own = resolver.load(opened[k].second);
    if (!own) continue;
    for (const auto& soname : it->second.sonames)
      open_one(ctx, resolver, *own, 0, site, soname, it->second.beside_opener, fw, opened);
  }
}

// The CUDA libraries of the tree, as the loader resolves them.
void collect_libraries(Context& ctx, const ld::Tree& tree, const std::string& site, Framework& fw) {
  static const std::regex cuda_lib(
      R"(^lib(cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|cufft|cusparse|curand|cusolver|nvrtc|nvJitLink|cupti|nvToolsExt)\.so)");
  for (std::size_t i = 1; i < tree.objects.size(); ++i) {
    const auto& o = tree.objects[i];
    if (!o.found) {
      if (o.name != "libcuda.so.1") fw.missing.push_back(o.name);
      continue;
    }
    for (const auto& v : o.missing_versions) fw.missing_versions.push_back(v + " (needed by " + o.path + ")");
    if (!std::regex_search(o.name, cuda_lib)) continue;
    fw.libraries.push_back(library_entry(ctx, site, fw, o.name, o.path, o.lookup.rule));
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
  collect_dlopened(ctx, resolver, *tree, site, fw);
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
