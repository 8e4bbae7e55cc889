// The knowledge base's hardware and loading facts: GPU brands (gpus.json), PCI Express
// generations (pcie.json) and the libraries opened at run time (runtime_libraries.json).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/kb/parse.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::kb {
namespace parse {

namespace {
double positive(const Reader& r, const char* key) {
  if (!r.has(key) || !r[key].is_number() || !(r[key].get<double>() > 0))
    r.fail(std::string("needs a positive number \"") + key + "\"");
  return r[key].get<double>();
}
}  // namespace

std::vector<GpuBrand> brands(const std::string& file, const json& doc) {
  std::vector<GpuBrand> out;
  if (doc.is_object() && !doc.contains("brands")) return out;  // a file of an older layout: no brand known
  std::size_t i = 0;
  for (const auto& j : records(file, doc, "brands")) {
    const Reader r(file + " brands", i++, j);
    GpuBrand b{r.str("brand"), r.strings("words"), std::nullopt, r.opt_str("note"), r.sources().front()};
    if (r.has("forward_compat")) {  // null or absent: only on some boards
      if (!r["forward_compat"].is_boolean()) r.fail("\"forward_compat\" must be true, false or null");
      b.forward_compat = r["forward_compat"].get<bool>();
    }
    for (const auto& o : out)
      if (o.brand == b.brand) r.fail("brand '" + b.brand + "' listed twice");
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<PcieGeneration> pcie(const std::string& file, const json& doc) {
  std::vector<PcieGeneration> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc)) {
    const Reader r(file, i++, j);
    PcieGeneration g{r.integer("generation"), positive(r, "gt_per_s"), r.str("encoding"), positive(r, "lane_gb_per_s"),
                     r.sources().front()};
    if (g.generation != static_cast<int>(out.size()) + 1) r.fail("generations must run 1, 2, 3… in order");
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<RuntimeOpens> runtime_libraries(const std::string& file, const json& doc) {
  std::vector<RuntimeOpens> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc)) {
    const Reader r(file, i++, j);
    RuntimeOpens o;
    o.framework = r.opt_str("framework");
    o.opener = r.opt_str("opener");
    if (o.framework.empty() == o.opener.empty()) r.fail("needs either \"framework\" or \"opener\"");
    o.cuda = r.has("cuda") ? r.integer("cuda") : 0;
    if (r.has("beside_opener")) {
      if (!r["beside_opener"].is_boolean() || o.opener.empty())
        r.fail("\"beside_opener\" is a boolean of an opener's record");
      o.beside_opener = r["beside_opener"].get<bool>();
    }
    if (!o.framework.empty() && o.cuda <= 0) r.fail("a framework's record needs its CUDA major \"cuda\"");
    if (!r.has("libraries") || !r["libraries"].is_array() || r["libraries"].empty())
      r.fail("needs a non-empty \"libraries\" list");
    std::size_t k = 0;
    for (const auto& l : r["libraries"]) {
      const Reader lr(file + " record " + std::to_string(i - 1) + " library", k++, l);
      RuntimeLibrary lib{lr.str("soname"), lr.opt_str("needed_for")};
      if (!lib.soname.starts_with("lib") || lib.soname.find(".so") == std::string::npos)
        lr.fail("not a soname: '" + lib.soname + "'");
      o.libraries.push_back(std::move(lib));
    }
    o.note = r.opt_str("note");
    o.source = r.sources().front();
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<CudaComponent> components(const std::string& file, const json& doc) {
  std::vector<CudaComponent> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc, "components")) {
    const Reader r(file + " components", i++, j);
    CudaComponent c{r.str("stem"), r.str("name"), r.opt_str("wheel"), r.sources().front()};
    if (!c.stem.starts_with("lib")) r.fail("stem is not a library name: '" + c.stem + "'");
    for (const auto& o : out)
      if (o.stem == c.stem) r.fail("stem '" + c.stem + "' listed twice");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace parse

const GpuBrand* KnowledgeBase::brand_of(std::uint16_t pci_id, const std::string& name) const {
  const auto by_name = [&](const std::string& b) -> const GpuBrand* {
    for (const auto& x : m_brands)
      if (x.brand == b) return &x;
    return nullptr;
  };
  if (const auto* g = gpu_by_pci_id(pci_id); g && !g->brand.empty()) return by_name(g->brand);
  for (const auto& b : m_brands)
    for (const auto& w : b.words)
      if (name.find(w) != std::string::npos) return &b;
  return nullptr;
}

const PcieGeneration* KnowledgeBase::pcie_generation(int generation) const {
  for (const auto& g : m_pcie)
    if (g.generation == generation) return &g;
  return nullptr;
}

const PcieGeneration* KnowledgeBase::pcie_generation_at(const std::string& sysfs_speed) const {
  const double gt = std::strtod(sysfs_speed.c_str(), nullptr);
  for (const auto& g : m_pcie)
    if (gt > 0 && std::abs(g.gt_per_s - gt) < 0.01) return &g;
  return nullptr;
}

const RuntimeLibrary* KnowledgeBase::runtime_library(const std::string& soname) const {
  for (const auto& o : m_runtime_opens)
    for (const auto& l : o.libraries) {
      if (l.soname == soname) return &l;
      const auto at = l.soname.find("{cudnn}");
      if (at != std::string::npos && soname.size() > at && soname.compare(0, at, l.soname, 0, at) == 0 &&
          std::all_of(soname.begin() + static_cast<long>(at), soname.end(),
                      [](char c) { return c >= '0' && c <= '9'; }))
        return &l;
    }
  return nullptr;
}

const CudaComponent* KnowledgeBase::component_of(const std::string& soname) const {
  const CudaComponent* best = nullptr;
  for (const auto& c : m_components)
    if (soname.starts_with(c.stem) && soname.size() > c.stem.size() &&
        (soname[c.stem.size()] == '.' || soname[c.stem.size()] == '_' || soname[c.stem.size()] == '-') &&
        (!best || c.stem.size() > best->stem.size()))
      best = &c;
  return best;
}

}  // namespace cudoctor::kb
