// The questions the rules and the planner ask the knowledge base.
#include <algorithm>
#include <set>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::kb {
namespace {

util::Version major_minor(const util::Version& v) {
  return util::Version{{v.major(), v.minor()}, ""};
}

// Words of a GPU name for matching: lower case, NVIDIA's brand words dropped, "laptop" and
// "mobile" taken as one (pci.ids says "Mobile", NVIDIA's marketing says "Laptop GPU").
std::vector<std::string> name_words(std::string_view s) {
  std::vector<std::string> out;
  std::string w;
  const auto flush = [&] {
    if (w.empty()) return;
    if (w == "laptop") w = "mobile";
    if (w != "nvidia" && w != "geforce" && w != "gpu" && w != "max" && w != "q" && w != "corporation") out.push_back(w);
    w.clear();
  };
  for (const char c : s) {
    const char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9'))
      w += l;
    else
      flush();
  }
  flush();
  return out;
}

}  // namespace

std::vector<std::string> KnowledgeBase::sources() const {
  std::set<std::string> s;
  for (const auto& [_, c] : m_nvml) s.insert(c.source);
  for (const auto& c : m_cuda_errors) s.insert(c.source);
  for (const auto& t : m_toolkits) s.insert(t.source);
  for (const auto& m : m_majors) s.insert(m.source);
  for (const auto& b : m_branches) s.insert(b.source);
  for (const auto& g : m_gpus) s.insert(g.source);
  for (const auto& a : m_archs) s.insert(a.sources.begin(), a.sources.end());
  for (const auto& f : m_frameworks)
    for (const auto& r : f.releases) s.insert(r.sources.begin(), r.sources.end());
  for (const auto& r : m_settings.records) s.insert(r.source);
  for (const auto& r : m_settings.not_read) s.insert(r.source);
  for (const auto& r : m_settings.allocator_keys) s.insert(r.source);
  for (const auto& b : m_brands) s.insert(b.source);
  for (const auto& g : m_pcie) s.insert(g.source);
  for (const auto& o : m_runtime_opens) s.insert(o.source);
  for (const auto& c : m_components) s.insert(c.source);
  return {s.begin(), s.end()};
}

const ReturnCode* KnowledgeBase::nvml_return_code(int code) const {
  const auto it = m_nvml.find(code);
  return it == m_nvml.end() ? nullptr : &it->second;
}

const ReturnCode* KnowledgeBase::cuda_error(const std::string& api, int code) const {
  for (const auto& e : m_cuda_errors)
    if (e.api == api && e.code == code) return &e;
  return nullptr;
}

const Framework* KnowledgeBase::framework(const std::string& name) const {
  for (const auto& f : m_frameworks)
    if (f.name == name) return &f;
  return nullptr;
}

const ToolkitRelease* KnowledgeBase::first_release_of(const util::Version& cuda) const {
  const ToolkitRelease* best = nullptr;
  for (const auto& t : m_toolkits)
    if (t.cuda.major() == cuda.major() && t.cuda.minor() == cuda.minor() &&
        (!best || t.min_driver_linux < best->min_driver_linux))
      best = &t;
  return best;
}

std::optional<util::Version> KnowledgeBase::min_driver_for_cuda(const util::Version& cuda) const {
  if (const auto* t = first_release_of(cuda)) return t->min_driver_linux;
  return std::nullopt;
}

std::optional<util::Version> KnowledgeBase::minor_compat_floor(int major) const {
  for (const auto& m : m_majors)
    if (m.major == major) return m.minor_compat_floor;
  return std::nullopt;
}

DriverFit KnowledgeBase::driver_fit(const util::Version& driver, const util::Version& cuda) const {
  if (const auto need = min_driver_for_cuda(cuda); need && driver >= *need) return DriverFit::native;
  if (const auto floor = minor_compat_floor(cuda.major()); floor && driver >= *floor) return DriverFit::minor_compat;
  return DriverFit::too_old;
}

const ToolkitRelease* KnowledgeBase::newest_toolkit_for_driver(const util::Version& driver) const {
  const ToolkitRelease* best = nullptr;
  for (const auto& t : m_toolkits)
    if (driver >= t.min_driver_linux && (!best || t.cuda > best->cuda)) best = &t;
  return best;
}

std::optional<util::Version> KnowledgeBase::max_cuda_for_driver(const util::Version& driver) const {
  for (const auto& b : m_branches)
    if (b.branch == driver.major()) return b.max_cuda;
  // Beyond the newest branch: at least what that branch supports (the caller says it is a floor).
  if (driver_beyond_kb(driver)) return newest_branch()->max_cuda;
  if (const auto* t = newest_toolkit_for_driver(driver)) return major_minor(t->cuda);
  return std::nullopt;
}

const DriverBranch* KnowledgeBase::newest_branch() const {
  return m_branches.empty() ? nullptr : &m_branches.back();
}

bool KnowledgeBase::driver_beyond_kb(const util::Version& driver) const {
  const auto* b = newest_branch();
  return b && driver.major() > b->branch;
}

std::optional<util::Version> KnowledgeBase::newest_cuda() const {
  const auto all = cuda_versions();
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::optional<util::Version> release_minor(const std::string& version) {
  const auto v = util::Version::parse(version);
  if (!v || v->parts.size() < 2) return std::nullopt;
  return major_minor(*v);
}

const FrameworkRelease* KnowledgeBase::release_of(const Framework& f, const util::Version& installed) const {
  const auto want = major_minor(installed);
  for (const auto& r : f.releases) {
    const auto first = release_minor(r.version);
    if (!first) continue;
    const auto last = r.last.empty() ? first : release_minor(r.last);
    if (want == *first || (want > *first && ((last && want <= *last) || r.open))) return &r;
  }
  return nullptr;
}

bool KnowledgeBase::release_beyond_kb(const Framework& f, const util::Version& installed) const {
  const auto want = major_minor(installed);
  bool any = false;
  for (const auto& r : f.releases) {
    const auto first = release_minor(r.version);
    if (!first) continue;
    any = true;
    const auto last = r.last.empty() ? first : release_minor(r.last);
    if (r.open || want <= *first || (last && want <= *last)) return false;
  }
  return any;
}

const GpuModel* KnowledgeBase::gpu_by_pci_id(std::uint16_t id) const {
  for (const auto& g : m_gpus)
    if (g.pci_id == id) return &g;
  return nullptr;
}

std::vector<const GpuModel*> KnowledgeBase::find_gpus(const std::string& query) const {
  // A PCI id: "10de:2684", "0x2684", "2684".
  auto id_text = util::to_lower(util::trim(query));
  if (id_text.starts_with("10de:")) id_text = id_text.substr(5);
  if (id_text.starts_with("0x")) id_text = id_text.substr(2);
  if (id_text.size() == 4)
    if (const auto id = util::parse_uint(id_text, 16))
      if (const auto* g = gpu_by_pci_id(static_cast<std::uint16_t>(*id))) return {g};
  // Otherwise every query word must appear in the name; fewer extra words rank first, so
  // "RTX 4060" prefers the desktop card to the laptop one.
  const auto want = name_words(query);
  if (want.empty()) return {};
  std::vector<std::pair<std::size_t, const GpuModel*>> hits;
  for (const auto& g : m_gpus) {
    const auto bracket = g.name.find('[');
    const auto have = name_words(bracket == std::string::npos ? g.name : g.name.substr(bracket));
    const bool all = std::all_of(want.begin(), want.end(), [&](const std::string& w) {
      return std::find(have.begin(), have.end(), w) != have.end();
    });
    if (all) hits.emplace_back(have.size() - want.size(), &g);
  }
  std::stable_sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const GpuModel*> out;
  for (const auto& [_, g] : hits) out.push_back(g);
  return out;
}

std::vector<const ReturnCode*> KnowledgeBase::find_errors(const std::string& query) const {
  std::vector<const ReturnCode*> hits;
  const auto code = util::parse_int(util::trim(query));
  const auto text = util::to_lower(util::trim(query));
  // By message: the query is part of a message, or a pasted line holds a whole message (one
  // long enough not to be a common phrase: "no error", "Success").
  const auto message_matches = [&](const ReturnCode& e) {
    if (code || text.size() < 4 || e.message.empty()) return false;
    const auto m = util::to_lower(e.message);
    return m.find(text) != std::string::npos || (m.size() >= 12 && text.find(m) != std::string::npos);
  };
  const auto matches = [&](int c, const ReturnCode& e) {
    return (code && c == *code) || util::to_lower(e.name) == text || message_matches(e);
  };
  for (const auto& e : m_cuda_errors)
    if (matches(e.code, e)) hits.push_back(&e);
  for (const auto& [c, e] : m_nvml)
    if (matches(c, e)) hits.push_back(&e);
  return hits;
}

const Architecture* KnowledgeBase::architecture_of(const util::Version& cc) const {
  for (const auto& a : m_archs)
    for (const auto& c : a.ccs)
      if (c.cc == cc) return &a;
  return nullptr;
}

const ArchCc* KnowledgeBase::arch_cc(const util::Version& cc) const {
  for (const auto& a : m_archs)
    for (const auto& c : a.ccs)
      if (c.cc == cc) return &c;
  return nullptr;
}

std::optional<util::Version> KnowledgeBase::min_driver_for_cc(const util::Version& cc) const {
  const auto* c = arch_cc(cc);
  if (!c) return std::nullopt;
  return min_driver_for_cuda(c->first_cuda);
}

std::vector<util::Version> KnowledgeBase::ccs_not_run_by(const util::Version& driver) const {
  std::vector<util::Version> out;
  for (const auto& a : m_archs)
    for (const auto& c : a.ccs) {
      const auto need = min_driver_for_cuda(c.first_cuda);
      if ((need && driver < *need) || (a.last_driver_branch && driver.major() > *a.last_driver_branch))
        out.push_back(c.cc);
    }
  std::sort(out.begin(), out.end());
  return out;
}

bool KnowledgeBase::toolkit_targets_cc(const util::Version& toolkit, const util::Version& cc) const {
  const auto* c = arch_cc(cc);
  if (!c) return false;
  const auto t = major_minor(toolkit);
  return t >= c->first_cuda && (!c->last_cuda || t <= *c->last_cuda);
}

std::vector<util::Version> KnowledgeBase::cuda_versions() const {
  std::vector<util::Version> out;
  for (const auto& t : m_toolkits) {
    const auto v = major_minor(t.cuda);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a > b; });
  return out;
}

std::vector<compat::Target> KnowledgeBase::toolkit_targets(const util::Version& toolkit) const {
  std::vector<compat::Target> out;
  for (const auto& a : m_archs)
    for (const auto& c : a.ccs)
      if (toolkit_targets_cc(toolkit, c.cc)) {
        out.push_back(compat::cubin_for(c.cc));
        out.push_back(compat::ptx_for(c.cc));
      }
  return out;
}

std::optional<KnowledgeBase::DriverVsGpu> KnowledgeBase::driver_vs_cc(const util::Version& driver,
                                                                      const util::Version& cc) const {
  if (const auto need = min_driver_for_cc(cc); need && driver < *need) return DriverVsGpu{true, need, std::nullopt};
  if (const auto* a = architecture_of(cc); a && a->last_driver_branch && driver.major() > *a->last_driver_branch)
    return DriverVsGpu{false, std::nullopt, a->last_driver_branch};
  return std::nullopt;
}

std::optional<Kernels> kernels(const FrameworkVariant& v) {
  if (v.min_cc) return Kernels{{}, v.min_cc};
  if (!v.archs) return std::nullopt;
  Kernels k;
  for (const auto& a : *v.archs) k.targets.push_back(compat::cubin_for(a));
  if (v.ptx) k.targets.push_back(compat::ptx_for(*v.ptx));
  return k;
}

compat::Verdict runs_on(const Kernels& k, const util::Version& cc, bool jit_possible) {
  if (k.min_cc) {
    compat::Verdict v;
    if (cc >= *k.min_cc) v.how = compat::How::compatible_cubin;
    return v;
  }
  return compat::runs_on(k.targets, cc, jit_possible);
}

}  // namespace cudoctor::kb
