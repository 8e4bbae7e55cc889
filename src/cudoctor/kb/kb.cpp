#include "cudoctor/kb/kb.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cudoctor/kb/embedded.hpp"
#include "cudoctor/kb/json_read.hpp"
#include "cudoctor/kb/parse.hpp"

namespace cudoctor::kb {
namespace {

using nlohmann::json;
using parse::Reader;
using parse::records;

std::vector<ReturnCode> parse_codes(const std::string& file, const json& doc, const std::string& fixed_api) {
  std::vector<ReturnCode> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc)) {
    const Reader r(file, i++, j);
    ReturnCode rc;
    rc.api = fixed_api.empty() ? r.str("api") : fixed_api;
    if (rc.api != "runtime" && rc.api != "driver" && rc.api != "nvml") r.fail("api must be runtime, driver or nvml");
    rc.code = r.integer("code");
    rc.name = r.str("name");
    rc.meaning = r.str("meaning");
    rc.message = r.opt_str("message");
    rc.causes = r.strings("causes");
    rc.status = r.status();
    rc.source = r.sources().front();
    if (rc.meaning.empty()) r.fail("empty meaning");
    out.push_back(std::move(rc));
  }
  return out;
}

void parse_toolkits(const std::string& file, const json& doc, KnowledgeBase& kb, std::vector<ToolkitRelease>& releases,
                    std::vector<CudaMajor>& majors) {
  std::size_t i = 0;
  for (const auto& j : records(file, doc, "releases")) {
    const Reader r(file, i++, j);
    ToolkitRelease t;
    t.cuda = r.version("cuda");
    t.release = r.str("release");
    // Where NVIDIA's exact minimum is not established, the branch known to support it.
    if (r.has("min_driver_linux")) {
      t.min_driver_linux = r.version("min_driver_linux");
    } else {
      if (!r.has("min_driver_branch")) r.fail("needs \"min_driver_linux\" or \"min_driver_branch\"");
      // Written "R615" wherever it is printed: no driver is called "615".
      const int branch = r.integer("min_driver_branch");
      t.min_driver_linux = util::Version{{branch}, "R" + std::to_string(branch)};
      t.min_driver_exact = false;
    }
    t.min_driver_windows = r.opt_str("min_driver_windows");
    t.status = r.status();
    t.note = r.opt_str("note");
    t.source = r.sources().front();
    releases.push_back(std::move(t));
  }
  i = 0;
  for (const auto& j : records(file, doc, "majors")) {
    const Reader r(file + " majors", i++, j);
    majors.push_back({r.integer("major"), r.version("minor_compat_min_driver_linux"), r.sources().front()});
  }
  (void)kb;
}

std::vector<DriverBranch> parse_branches(const std::string& file, const json& doc) {
  std::vector<DriverBranch> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc)) {
    const Reader r(file, i++, j);
    out.push_back({r.integer("branch"), r.version("max_cuda"), r.status(), r.opt_str("kind"), r.opt_str("note"),
                   r.sources().front()});
  }
  return out;
}

std::vector<GpuModel> parse_gpus(const std::string& file, const json& doc) {
  std::vector<GpuModel> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc)) {
    const Reader r(file, i++, j);
    const auto id = r.str("pci_id");
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(id, &used, 16);
    } catch (...) {
      r.fail("pci_id is not hex: '" + id + "'");
    }
    if (used != id.size() || v > 0xffff) r.fail("pci_id is not a 16-bit hex number: '" + id + "'");
    out.push_back({static_cast<std::uint16_t>(v), r.str("name"), r.str("architecture"), r.version("cc"), r.status(),
                   r.sources().front(), r.opt_str("brand")});
  }
  return out;
}

std::vector<Architecture> parse_archs(const std::string& file, const json& doc) {
  std::vector<Architecture> out;
  std::size_t i = 0;
  for (const auto& j : records(file, doc)) {
    const Reader r(file, i++, j);
    Architecture a;
    a.name = r.str("name");
    a.sources = r.sources();
    if (r.has("last_driver_branch")) a.last_driver_branch = r.integer("last_driver_branch");
    if (!r.has("ccs") || !r["ccs"].is_array() || r["ccs"].empty()) r.fail("needs a non-empty \"ccs\" array");
    std::size_t k = 0;
    for (const auto& cj : r["ccs"]) {
      const Reader c(file + " " + a.name + " cc", k++, cj);
      ArchCc cc{c.version("cc"), c.version("first_cuda"), std::nullopt, c.status()};
      if (c.has("last_cuda")) cc.last_cuda = c.version("last_cuda");
      a.ccs.push_back(std::move(cc));
    }
    out.push_back(std::move(a));
  }
  return out;
}

// The minor version of a CPython "3.N" as the data writes it (no leading zeros); nullopt otherwise.
std::optional<int> python_minor(const std::string& text) {
  if (!text.starts_with("3.")) return std::nullopt;
  const auto digits = text.substr(2);
  if (digits.empty() || digits.size() > 3 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  for (const char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoi(digits);
}

// A release's "python" list: "3.N" entries, oldest first, each once. Absent means unknown, so an
// empty list is an error rather than a second way to say it.
std::vector<std::string> parse_python(const Reader& r) {
  const auto& list = r["python"];
  if (!list.is_array() || list.empty()) r.fail("\"python\" must be a non-empty list (leave it out when unknown)");
  std::vector<std::string> out;
  int last = -1;
  for (const auto& p : list) {
    const auto text = p.is_string() ? p.get<std::string>() : p.dump();
    const auto minor = p.is_string() ? python_minor(text) : std::nullopt;
    if (!minor) r.fail("\"python\" entry is not a CPython minor version \"3.N\": '" + text + "'");
    if (*minor <= last) r.fail("\"python\" is not oldest first without repeats at '" + text + "'");
    last = *minor;
    out.push_back(text);
  }
  return out;
}

std::vector<Framework> parse_frameworks(const std::string& file, const json& doc) {
  std::vector<Framework> out;
  std::size_t i = 0;
  for (const auto& fj : records(file, doc, "frameworks")) {
    const Reader fr(file, i++, fj);
    Framework f{fr.str("name"), fr.str("display"), {}};
    if (!fr.has("releases") || !fr["releases"].is_array()) fr.fail("needs a \"releases\" array");
    std::size_t k = 0;
    for (const auto& rj : fr["releases"]) {
      const Reader r(file + " " + f.name + " release", k++, rj);
      FrameworkRelease rel;
      rel.version = r.str("version");
      rel.cudnn = r.opt_str("cudnn");
      rel.note = r.opt_str("note");
      rel.status = r.status();
      rel.date = r.opt_str("date");
      rel.last = r.opt_str("last");
      rel.open = r.has("open") && r["open"].is_boolean() && r["open"].get<bool>();
      if (rel.open && rel.status == "planned") r.fail("a planned release cannot stand for later ones (\"open\")");
      rel.sources = r.sources();
      if (r.has("python")) rel.python = parse_python(r);
      if (!r.has("variants") || !r["variants"].is_array() || r["variants"].empty()) r.fail("needs \"variants\"");
      std::size_t n = 0;
      for (const auto& vj : r["variants"]) {
        const Reader v(file + " " + f.name + " " + rel.version + " variant", n++, vj);
        FrameworkVariant var;
        var.cuda = v.version("cuda");
        var.install = v.str("install");
        var.arch_status = v.opt_str("arch_status");
        if (v.has("archs")) {
          if (!v["archs"].is_array()) v.fail("\"archs\" must be a list or null");
          std::vector<util::Version> archs;
          for (const auto& a : v["archs"]) {
            if (!a.is_string()) v.fail("\"archs\" entries must be strings");
            archs.push_back(v.parse_version(a.get<std::string>(), "archs"));
          }
          var.archs = std::move(archs);
        }
        if (v.has("ptx")) var.ptx = v.version("ptx");
        if (v.has("min_cc")) var.min_cc = v.version("min_cc");
        if (v.has("cuda_max")) var.cuda_max = v.version("cuda_max");
        rel.variants.push_back(std::move(var));
      }
      f.releases.push_back(std::move(rel));
    }
    out.push_back(std::move(f));
  }
  return out;
}

constexpr const char* k_files[] = {"nvml_return_codes.json",
                                   "cuda_error_codes.json",
                                   "cuda_toolkits.json",
                                   "driver_branches.json",
                                   "gpus.json",
                                   "architectures.json",
                                   "frameworks.json",
                                   "settings.json",
                                   "pcie.json",
                                   "runtime_libraries.json"};

}  // namespace

util::Result<KnowledgeBase> KnowledgeBase::load(const std::vector<std::pair<std::string, std::string>>& files) {
  KnowledgeBase kb;
  std::map<std::string, json> docs;
  for (const auto& [name, text] : files) {
    // Only the files read below: log_signatures.json, half the bytes, is explain's to parse.
    if (name != "kb_meta.json" && std::find(std::begin(k_files), std::end(k_files), name) == std::end(k_files))
      continue;
    auto doc = read_json(text);
    if (!doc) return util::error(name + ": not valid JSON: " + doc.error());
    docs[name] = std::move(doc).value();
  }
  try {
    for (const char* f : k_files)
      if (!docs.count(f)) return util::error(std::string("knowledge base: ") + f + " is missing");
    for (auto& rc : parse_codes("nvml_return_codes.json", docs["nvml_return_codes.json"], "nvml")) {
      if (kb.m_nvml.count(rc.code))
        return util::error("nvml_return_codes.json: code " + std::to_string(rc.code) + " listed twice");
      kb.m_nvml[rc.code] = std::move(rc);
    }
    kb.m_cuda_errors = parse_codes("cuda_error_codes.json", docs["cuda_error_codes.json"], "");
    parse_toolkits("cuda_toolkits.json", docs["cuda_toolkits.json"], kb, kb.m_toolkits, kb.m_majors);
    kb.m_branches = parse_branches("driver_branches.json", docs["driver_branches.json"]);
    kb.m_gpus = parse_gpus("gpus.json", docs["gpus.json"]);
    kb.m_brands = parse::brands("gpus.json", docs["gpus.json"]);
    for (const auto& g : kb.m_gpus)
      if (!g.brand.empty() &&
          std::none_of(kb.m_brands.begin(), kb.m_brands.end(), [&](const GpuBrand& b) { return b.brand == g.brand; }))
        return util::error("gpus.json: " + g.name + ": brand '" + g.brand + "' is not one of the brands");
    kb.m_pcie = parse::pcie("pcie.json", docs["pcie.json"]);
    kb.m_runtime_opens = parse::runtime_libraries("runtime_libraries.json", docs["runtime_libraries.json"]);
    kb.m_components = parse::components("runtime_libraries.json", docs["runtime_libraries.json"]);
    kb.m_archs = parse_archs("architectures.json", docs["architectures.json"]);
    kb.m_frameworks = parse_frameworks("frameworks.json", docs["frameworks.json"]);
    kb.m_settings = parse_settings("settings.json", &docs["settings.json"]);
    if (docs.count("kb_meta.json") && docs["kb_meta.json"].is_object())
      kb.m_date = docs["kb_meta.json"].value("date", "");
  } catch (const std::exception& e) {
    return util::error(e.what());
  }
  return kb;
}

util::Result<KnowledgeBase> KnowledgeBase::load_embedded() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : embedded_files()) files.emplace_back(std::string(f.name), std::string(f.text));
  return load(files);
}

util::Result<KnowledgeBase> KnowledgeBase::load_with_overrides(const std::string& dir, const FileReader& read) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : embedded_files()) {
    auto text = read(dir + "/" + std::string(f.name));
    if (!text) return util::error("--kb: " + text.error());
    files.emplace_back(std::string(f.name), text->has_value() ? std::move(**text) : std::string(f.text));
  }
  auto kb = load(files);
  if (!kb) return kb;
  if (const auto p = kb->problems(); !p.empty()) return util::error("--kb " + dir + ": " + p.front());
  return kb;
}

namespace {
std::optional<KnowledgeBase>& override_slot() {
  static std::optional<KnowledgeBase> slot;
  return slot;
}
}  // namespace

std::string causes_text(const ReturnCode& e) {
  if (e.causes.size() == 1) return " " + e.causes.front();
  std::string out;
  for (std::size_t i = 0; i < e.causes.size(); ++i)
    out += (i ? " (" : " It is usually one of: (") + std::to_string(i + 1) + ") " + e.causes[i];
  return out;
}

bool recommendable(const FrameworkRelease& r) {
  return r.status != "planned" && r.status != "withdrawn";
}

std::string min_driver_text(const ToolkitRelease& t) {
  if (t.min_driver_exact) return t.min_driver_linux.str();
  return "R" + std::to_string(t.min_driver_linux.major()) + " (exact minimum not established)";
}

std::optional<bool> supports_python(const FrameworkRelease& release, const util::Version& python) {
  if (release.python.empty()) return std::nullopt;
  const auto wanted = std::to_string(python.major()) + "." + std::to_string(python.minor());
  return std::find(release.python.begin(), release.python.end(), wanted) != release.python.end();
}

const KnowledgeBase& builtin() {
  if (override_slot()) return *override_slot();
  // Never destroyed: freeing its thousands of nodes at exit is a millisecond of nothing.
  static const KnowledgeBase* const kb = [] {
    auto r = KnowledgeBase::load_embedded();
    if (!r) throw std::logic_error("embedded knowledge base is broken: " + r.error());
    return new KnowledgeBase(std::move(r).value());
  }();
  return *kb;
}

void set_builtin(KnowledgeBase kb) {
  override_slot() = std::move(kb);
}

}  // namespace cudoctor::kb
