#include "cudoctor/fleet/digest.hpp"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <map>

#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::fleet {

namespace {

// RapidJSON, not nlohmann, reads reports: fleet reads thousands of them, and RapidJSON's
// in-memory parse is about five times faster here (bench/fleet_speed.py). Iterative parsing:
// a hostile file nested a million deep cannot overflow the stack.
using Value = rapidjson::Value;
constexpr unsigned k_parse_flags = rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag;

const Value* member(const Value* v, const char* name) {
  if (!v || !v->IsObject()) return nullptr;
  const auto it = v->FindMember(name);
  return it == v->MemberEnd() ? nullptr : &it->value;
}

std::string text(const Value* v) {
  if (!v) return "";
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsUint64()) return std::to_string(v->GetUint64());
  if (v->IsDouble()) return fmt::format("{}", v->GetDouble());
  return "";
}

std::string text(const Value* v, const char* name) {
  return text(member(v, name));
}

// 13000 -> "13.0" (util::cuda_version_string), "" when the report has none.
std::string cuda_text(long long v) {
  return v > 0 ? util::cuda_version_string(static_cast<int>(v)) : "";
}

long long number(const Value* v, const char* name, long long fallback = -1) {
  const Value* m = member(v, name);
  if (m && m->IsInt64()) return m->GetInt64();
  return fallback;
}

template <typename F>
void each(const Value* v, F&& f) {
  if (!v || !v->IsArray()) return;
  for (const auto& e : v->GetArray()) f(e);
}

std::string joined(const Value* v, std::string_view sep) {
  std::string out;
  each(v, [&](const Value& e) {
    const auto s = text(&e);
    if (s.empty()) return;
    if (!out.empty()) out += sep;
    out += s;
  });
  return out;
}

// "9.1.0 /path/libcudnn.so.9", or the path alone when the version is unknown.
std::string version_at(const std::string& version, const std::string& path) {
  return version.empty() ? path : version + " " + path;
}

class Facts {
 public:
  void add(std::string key, std::string value, int layer) {
    if (value.empty()) return;
    m_facts.emplace(std::move(key), Fact{{}, std::move(value), layer});
  }
  std::vector<Fact> take() {
    std::vector<Fact> out;
    out.reserve(m_facts.size());
    for (auto& [k, f] : m_facts) {
      f.key = k;
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  std::map<std::string, Fact> m_facts;  // the first value of a key wins
};

void host_facts(const Value& doc, Facts& f) {
  const Value* host = member(&doc, "host");
  f.add("host.os", text(host, "os_pretty_name"), 0);
  f.add("host.kernel", text(host, "kernel"), 0);
  f.add("host.arch", text(host, "arch"), 0);
  f.add("host.container", text(member(host, "container"), "kind"), 0);
  f.add("host.wsl", text(member(host, "wsl"), "kind"), 0);
  f.add("cudoctor.version", text(&doc, "tool_version"), 0);
  f.add("cudoctor.knowledge_base", text(member(&doc, "knowledge_base"), "date"), 0);
  each(member(host, "nvidia_env"), [&](const Value& e) {
    const auto name = text(&e, "name");
    if (!name.empty()) f.add("env." + name, text(&e, "value").empty() ? "(empty)" : text(&e, "value"), 1);
  });
}

void driver_facts(const Value& doc, Facts& f) {
  const Value* driver = member(&doc, "driver");
  const Value* km = member(driver, "kernel_module");
  auto module = text(km, "version");
  if (!module.empty() && !text(km, "flavor").empty()) module += " (" + text(km, "flavor") + ")";
  f.add("driver.kernel_module", module, 1);
  const Value* nvml = member(driver, "nvml");
  f.add("driver.user_space", text(nvml, "driver_version"), 1);
  f.add("driver.cuda", cuda_text(number(nvml, "cuda_driver_version", 0)), 1);
  each(member(driver, "libraries"), [&](const Value& lib) {
    const auto soname = text(&lib, "soname");
    auto where = text(&lib, "real_path");
    if (where.empty()) where = text(&lib, "path");
    if (soname.empty()) return;
    f.add("driver.library." + soname, where.empty() ? "not found" : version_at(text(&lib, "version"), where), 1);
  });
  std::vector<std::string> nodes;
  each(member(driver, "device_nodes"), [&](const Value& n) {
    if (text(&n, "type") != "missing") nodes.push_back(text(&n, "path"));
  });
  std::sort(nodes.begin(), nodes.end());
  std::string node_list;
  for (const auto& n : nodes) node_list += (node_list.empty() ? "" : " ") + n;
  f.add("driver.device_nodes", node_list.empty() ? "(none)" : node_list, 1);
  std::string loaded;
  each(member(driver, "modules"), [&](const Value& m) {
    const Value* l = member(&m, "loaded");
    if (l && l->IsBool() && l->GetBool()) loaded += (loaded.empty() ? "" : " ") + text(&m, "name");
  });
  if (member(driver, "modules_listed")) f.add("driver.modules_loaded", loaded.empty() ? "(none)" : loaded, 1);
}

void gpu_facts(const Value& doc, Facts& f) {
  const Value* gpus = member(&doc, "gpus");
  f.add("gpu.count", std::to_string(gpus && gpus->IsArray() ? gpus->Size() : 0), 1);
  int i = 0;
  each(gpus, [&](const Value& g) {
    const auto k = fmt::format("gpu{}.", i++);
    const Value* n = member(&g, "nvml");
    const Value* pci = member(&g, "pci");
    if (n && n->IsObject()) {
      f.add(k + "name", text(n, "name"), 1);
      f.add(k + "compute_capability", text(n, "compute_capability"), 1);
      const auto mem = number(n, "memory_total_bytes", 0);
      if (mem > 0) f.add(k + "memory", fmt::format("{} MiB", mem >> 20), 1);
      const auto gen = number(n, "pcie_gen_current"), width = number(n, "pcie_width_current");
      if (gen > 0 && width > 0)
        f.add(k + "pcie",
              fmt::format("gen{} x{} (max gen{} x{})", gen, width, number(n, "pcie_gen_max"),
                          number(n, "pcie_width_max")),
              1);
      f.add(k + "persistence_mode", text(n, "persistence_mode"), 1);
      f.add(k + "mig_mode", text(n, "mig_mode"), 1);
      const auto limit = number(n, "power_limit_w");
      if (limit > 0) f.add(k + "power_limit", fmt::format("{} W", limit), 1);
    } else if (pci) {
      f.add(k + "pci_device", fmt::format("{:04x}:{:04x}", number(pci, "vendor_id", 0), number(pci, "device_id", 0)),
            1);
      f.add(k + "driver", text(pci, "driver").empty() ? "(none)" : text(pci, "driver"), 1);
    }
  });
}

void toolkit_facts(const Value& doc, Facts& f) {
  const Value* tk = member(&doc, "toolkit");
  const Value* list = member(&doc, "toolkits");
  if (!list) list = member(tk, "toolkits");
  const auto nvcc = text(tk, "path_nvcc_real");
  each(list, [&](const Value& t) {
    const auto root = text(&t, "root");
    f.add("toolkit." + root, text(&t, "version"), 2);
    if (!nvcc.empty() && text(&t, "nvcc") == nvcc) f.add("toolkit.in_effect", text(&t, "version") + " " + root, 2);
  });
  if (!nvcc.empty()) f.add("toolkit.in_effect", nvcc, 2);
  f.add("env.CUDA_HOME", text(tk, "cuda_home"), 2);
  f.add("env.LD_LIBRARY_PATH", joined(member(tk, "ld_library_path"), ":"), 2);
}

void framework_facts(const Value& doc, Facts& f) {
  const Value* envs = member(&doc, "pythons");
  if (!envs) envs = member(member(&doc, "python"), "envs");
  bool wheels_seen = false;
  each(envs, [&](const Value& env) {
    const Value* frameworks = member(&env, "frameworks");
    bool any = false;
    each(frameworks, [&](const Value& fw) {
      const auto name = text(&fw, "name");
      if (name.empty()) return;
      any = true;
      const auto k = name + ".";
      f.add(k + "version", text(&fw, "version"), 3);
      f.add(k + "cuda", text(&fw, "cuda").empty() ? "(CPU-only)" : text(&fw, "cuda"), 3);
      f.add(k + "cudnn", text(&fw, "cudnn"), 3);
      f.add(k + "environment", text(&env, "prefix"), 3);
      auto archs = joined(member(&fw, "sm_archs"), " ");
      const auto ptx = joined(member(&fw, "ptx_archs"), " ");
      if (!ptx.empty()) archs += (archs.empty() ? "" : " ") + ptx;
      f.add(k + "archs", archs, 3);
      each(member(&fw, "libraries"), [&](const Value& lib) {
        const auto soname = text(&lib, "soname");
        const auto path = text(&lib, "path");
        if (!soname.empty())
          f.add(k + "library." + soname, path.empty() ? "not found" : version_at(text(&lib, "version"), path), 3);
      });
      each(member(&fw, "missing"), [&](const Value& m) { f.add(k + "library." + text(&m), "not found", 3); });
    });
    // The nvidia-* wheels of the first environment with a framework: what it loads from.
    if (any && !wheels_seen) {
      wheels_seen = true;
      each(member(&env, "nvidia_packages"), [&](const Value& p) {
        if (p.IsArray() && p.Size() == 2) f.add("wheel." + text(&p[0]), text(&p[1]), 3);
      });
    }
  });
}

void runtime_facts(const Value& doc, Facts& f) {
  const Value* rt = member(&doc, "runtime");
  const Value* cvd = member(rt, "cuda_visible_devices");
  if (cvd && cvd->IsString()) f.add("env.CUDA_VISIBLE_DEVICES", text(cvd).empty() ? "(empty)" : text(cvd), 4);
  const Value* api = member(rt, "driver_api");
  f.add("runtime.cuInit", text(member(api, "init"), "name"), 4);
  each(member(rt, "cudarts"), [&](const Value& c) {
    const auto lib = text(&c, "library");
    if (lib.empty()) return;
    auto v = cuda_text(number(&c, "runtime_version", 0));
    const auto call = text(member(&c, "set_device"), "name");
    if (!call.empty()) v += (v.empty() ? "" : " ") + call;
    f.add("runtime.cudart." + lib, v, 4);
  });
}

Problem problem_of(const Value& v) {
  Problem p;
  p.id = text(&v, "id");
  p.layer = text(&v, "layer");
  p.severity = text(&v, "severity");
  p.title = text(&v, "title");
  p.text = p.title + "\n" + text(&v, "detail");
  each(member(&v, "evidence"), [&](const Value& e) { p.text += "\n" + text(&e); });
  const Value* cmds = member(member(&v, "fix"), "commands");
  if (cmds && cmds->IsArray() && !cmds->Empty()) p.command = text(&(*cmds)[0]);
  return p;
}

}  // namespace

const Fact* Digest::find(std::string_view key) const {
  const auto it =
      std::lower_bound(facts.begin(), facts.end(), key, [](const Fact& f, std::string_view k) { return f.key < k; });
  return it != facts.end() && it->key == key ? &*it : nullptr;
}

const Problem* Digest::problem(std::string_view id) const {
  for (const auto& p : problems)
    if (p.id == id) return &p;
  return nullptr;
}

int newest_schema() {
  return snapshot::k_schema_version;
}

util::Result<Digest> read_report(std::string_view body, std::string file) {
  rapidjson::Document doc;
  doc.Parse<k_parse_flags>(body.data(), body.size());
  if (doc.HasParseError()) {
    const auto at = doc.GetErrorOffset();
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return util::error("empty: no report in it");
    if (at >= body.size())
      return util::error(fmt::format("truncated: the JSON stops at byte {} before the report closes", body.size()));
    return util::error(fmt::format("not JSON: {} (at byte {})", rapidjson::GetParseError_En(doc.GetParseError()), at));
  }
  const Value* schema = member(&doc, "schema");
  const Value* verdict = member(&doc, "verdict");
  const Value* findings = member(&doc, "findings");
  if (!doc.IsObject() || !schema || !schema->IsInt() || !verdict || !verdict->IsObject() || !findings ||
      !findings->IsArray())
    return util::error("not a cudoctor report (no schema, verdict and findings: write one with cudoctor --json)");
  if (schema->GetInt() > newest_schema())
    return util::error(fmt::format("report schema {} is newer than this cudoctor reads ({}): upgrade cudoctor",
                                   schema->GetInt(), newest_schema()));
  Digest d;
  d.file = std::move(file);
  d.schema = schema->GetInt();
  d.tool_version = text(&doc, "tool_version");
  d.host = text(member(&doc, "host"), "hostname");
  const Value* healthy = member(verdict, "healthy");
  d.healthy = !healthy || !healthy->IsBool() || healthy->GetBool();
  d.break_layer = text(verdict, "break_layer");
  d.break_finding = text(verdict, "break_finding");
  d.summary = text(verdict, "summary");
  Facts facts;
  host_facts(doc, facts);
  driver_facts(doc, facts);
  gpu_facts(doc, facts);
  toolkit_facts(doc, facts);
  framework_facts(doc, facts);
  runtime_facts(doc, facts);
  d.facts = facts.take();
  each(findings, [&](const Value& v) {
    const auto sev = text(&v, "severity");
    if (sev == "error" || sev == "warn") d.problems.push_back(problem_of(v));
  });
  return d;
}

std::string shorten(std::string_view value, std::size_t max) {
  if (value.size() <= max) return std::string(value);
  // Keep the end: of a path, the file name is what tells two apart.
  const std::size_t keep = max > 1 ? max - 1 : 0;
  return "…" + std::string(value.substr(value.size() - keep));
}

}  // namespace cudoctor::fleet
