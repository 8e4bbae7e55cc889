// The knowledge base's check of itself: each table in order and complete, and no two records
// that contradict each other. Run on the embedded data by the tests and on every --kb load.
#include <fmt/format.h>

#include <set>

#include "cudoctor/kb/kb.hpp"

namespace cudoctor::kb {
namespace {

std::string str(const util::Version& v) {
  return v.str();
}

util::Version major_minor(const util::Version& v) {
  return util::Version{{v.major(), v.minor()}, ""};
}

}  // namespace

std::vector<std::string> KnowledgeBase::problems() const {
  std::vector<std::string> p;
  // Toolkit releases: newest first, and every CUDA minor from the oldest to the newest
  // present, except those NVIDIA never shipped.
  for (std::size_t i = 1; i < m_toolkits.size(); ++i)
    if (m_toolkits[i].cuda > m_toolkits[i - 1].cuda ||
        (m_toolkits[i].cuda == m_toolkits[i - 1].cuda &&
         m_toolkits[i].min_driver_linux > m_toolkits[i - 1].min_driver_linux))
      p.push_back("cuda_toolkits.json: '" + m_toolkits[i].release + "' is out of order (newest first)");
  const std::set<std::string> never_shipped = {"12.7"};  // release notes Table 3 goes 12.6 -> 12.8
  std::set<std::pair<int, int>> have;
  for (const auto& t : m_toolkits) have.insert({t.cuda.major(), t.cuda.minor()});
  for (int major = 10; major <= 13; ++major) {
    int max_minor = -1;
    for (const auto& [ma, mi] : have)
      if (ma == major) max_minor = std::max(max_minor, mi);
    for (int minor = 0; minor <= max_minor; ++minor)
      if (!have.count({major, minor}) && !never_shipped.count(std::to_string(major) + "." + std::to_string(minor)))
        p.push_back("cuda_toolkits.json: no release of CUDA " + std::to_string(major) + "." + std::to_string(minor));
  }
  for (int major = 11; major <= 13; ++major)
    if (!minor_compat_floor(major) && have.count({major, 0}))
      p.push_back("cuda_toolkits.json: no minor-version-compatibility floor for CUDA " + std::to_string(major));
  for (std::size_t i = 1; i < m_branches.size(); ++i)
    if (m_branches[i].branch <= m_branches[i - 1].branch || m_branches[i].max_cuda < m_branches[i - 1].max_cuda)
      p.push_back("driver_branches.json: branch " + std::to_string(m_branches[i].branch) +
                  " is out of order (oldest first)");
  std::set<std::uint16_t> ids;
  for (const auto& g : m_gpus) {
    if (!ids.insert(g.pci_id).second) p.push_back("gpus.json: device id " + std::to_string(g.pci_id) + " listed twice");
    if (!architecture_of(g.cc))
      p.push_back("gpus.json: " + g.name + " has compute capability " + str(g.cc) + " of no known architecture");
  }
  std::set<std::string> ccs;
  for (const auto& a : m_archs)
    for (const auto& c : a.ccs)
      if (!ccs.insert(str(c.cc)).second) p.push_back("architectures.json: cc " + str(c.cc) + " listed twice");
  std::set<std::pair<std::string, int>> codes;
  for (const auto& e : m_cuda_errors)
    if (!codes.insert({e.api, e.code}).second)
      p.push_back("cuda_error_codes.json: " + e.api + " code " + std::to_string(e.code) + " listed twice");
  toolkit_problems(p);
  for (const auto& g : m_gpus)
    // "Blackwell Ultra", "Blackwell (Thor)" are Blackwell: a model may name its variant.
    if (const auto* a = architecture_of(g.cc); a && !g.architecture.starts_with(a->name))
      p.push_back("gpus.json: " + g.name + " is " + g.architecture + ", but compute capability " + str(g.cc) + " is " +
                  a->name + " in architectures.json");
  for (const auto& f : m_frameworks) framework_problems(f, p);
  return p;
}

// Every toolkit's minimum driver falls in a known branch that supports it, and no branch
// supports less than a toolkit it is the minimum of.
void KnowledgeBase::toolkit_problems(std::vector<std::string>& p) const {
  for (const auto& t : m_toolkits) {
    const DriverBranch* in = nullptr;
    for (const auto& b : m_branches)
      if (b.branch == t.min_driver_linux.major()) in = &b;
    if (!in)
      p.push_back("cuda_toolkits.json: '" + t.release + "' needs driver " + min_driver_text(t) +
                  ", of no branch in driver_branches.json");
    else if (in->max_cuda < major_minor(t.cuda))
      p.push_back("cuda_toolkits.json: '" + t.release + "' needs a R" + std::to_string(in->branch) +
                  " driver, but driver_branches.json gives R" + std::to_string(in->branch) + " CUDA " +
                  str(in->max_cuda));
  }
}

// Each release once; every variant's CUDA (and its newest) a known toolkit; a torch install
// line's wheel index names the variant's CUDA.
void KnowledgeBase::framework_problems(const Framework& f, std::vector<std::string>& p) const {
  std::set<std::string> versions;
  for (const auto& r : f.releases) {
    const auto who = "frameworks.json: " + f.name + " " + r.version;
    if (!versions.insert(r.version).second) p.push_back(who + " is listed twice");
    if (!r.last.empty() &&
        !(release_minor(r.last) && release_minor(r.version) && *release_minor(r.last) > *release_minor(r.version)))
      p.push_back(who + ": \"last\" " + r.last + " is not a later release");
    for (const auto& v : r.variants) {
      if (!min_driver_for_cuda(v.cuda)) p.push_back(who + " uses CUDA " + str(v.cuda) + ", not in the toolkit table");
      if (v.cuda_max && (*v.cuda_max < v.cuda || !min_driver_for_cuda(*v.cuda_max)))
        p.push_back(who + ": cuda_max " + str(*v.cuda_max) + " is not a known toolkit from " + str(v.cuda));
      if (v.install.empty()) p.push_back(who + " has no install command");
      const auto tag = fmt::format("/whl/cu{}{}", v.cuda.major(), v.cuda.minor());
      if (f.name == "torch" && v.install.find("/whl/cu") != std::string::npos &&
          v.install.find(tag) == std::string::npos)
        p.push_back(who + " CUDA " + str(v.cuda) + ": the install line's index is not " + tag.substr(5));
    }
  }
}

}  // namespace cudoctor::kb
