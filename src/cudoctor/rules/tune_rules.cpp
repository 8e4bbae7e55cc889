// Tuning: every setting found (snapshot::SettingsFacts) judged by what its reader really does
// with the value (kb::Settings): a value its reader rejects or reads otherwise, a variable
// nothing reads, a setting that costs speed, one that does nothing for CUDA, and the rest
// explained. One finding per setting and value, with every place that sets it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/rules/tune.hpp"
#include "cudoctor/rules/tune_values.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules {
namespace {

using tune::Group;

std::vector<Group> groups(const snapshot::SettingsFacts& facts) {
  std::vector<Group> out;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> at;  // (name, value) -> index
  for (const auto& s : facts.settings) {
    const auto [it, fresh] = at.try_emplace({s.name, s.value}, out.size());
    if (fresh) out.push_back({s.name, s.value, {}});
    out[it->second].places.push_back(&s);
  }
  return out;
}

std::string shown(const Group& g) {
  return g.places.front()->kind == "nvidia-smi" ? fmt::format("{} {}", g.name, g.value)
                                                : fmt::format("{}={}", g.name, g.value);
}

std::string about(const kb::SettingRecord& r) {
  std::string s = r.effect;
  if (!r.claim.empty())
    s += fmt::format(" It is often said to do something else (\"{}\"): in fact {}.", r.claim, r.truth);
  return s + fmt::format(" (Read by {}; source: {}.)", r.owner, r.source);
}

// Where a setting written only in files applies.
std::string reach(const Group& g) {
  if (g.in_process() || g.places.front()->kind != "env") return "";
  return " It is not set in this shell's environment: it applies to what reads the file named in the evidence.";
}

Finding finding(FindingId id, const Group& g, std::string title, std::string detail) {
  auto f = make_finding(id);
  f.title = std::move(title);
  f.detail = std::move(detail) + reach(g);
  f.evidence = tune::where(g);
  return f;
}

// A word for a yes/no, as a number or as true/false; "" when the value is neither.
std::string boolean_word(const std::string& v, bool as_number) {
  const auto l = util::to_lower(v);
  const bool yes = l == "true" || l == "yes" || l == "on" || l == "1";
  const bool no = l == "false" || l == "no" || l == "off" || l == "0";
  if (!yes && !no) return "";
  return as_number ? (yes ? "1" : "0") : (yes ? "true" : "false");
}

const kb::SettingValue* match(const kb::SettingRecord& r, const std::string& value) {
  const auto n = tune::read_int(value);
  const bool number = n.whole || !r.word_reads_as.empty();
  for (const auto& v : r.values) {
    if (v.match == value || v.match == "*") return &v;
    if (r.grammar == "int" && number && ((v.match == "nonzero" && n.value != 0) || (v.match == "zero" && n.value == 0)))
      return &v;
  }
  return nullptr;
}

// The value is not one its reader takes: the finding, and what to set instead ("" none known).
std::optional<Finding> rejected(const kb::SettingRecord& r, const Group& g, std::string& corrected) {
  std::string why;
  if (r.grammar == "int" && !tune::read_int(g.value).whole) {
    corrected = boolean_word(g.value, true);
    why =
        r.word_reads_as.empty()
            ? fmt::format("{} documents a number for {}; how it reads \"{}\" is not documented.", r.owner, g.name,
                          g.value)
            : fmt::format("{} reads {} with strtoll, so \"{}\" reads as {} and the setting is not what it looks like.",
                          r.owner, g.name, g.value, r.word_reads_as);
  } else if (r.grammar == "choice" && std::find(r.accepted.begin(), r.accepted.end(), g.value) == r.accepted.end()) {
    for (const auto& a : r.accepted)
      if (util::to_lower(a) == util::to_lower(g.value)) corrected = a;
    why = fmt::format("{} accepts exactly {}; \"{}\" is not one of them, and is ignored.", r.owner,
                      fmt::join(r.accepted, ", "), g.value);
  } else if (r.grammar == "exact_bool" && g.value != "true" && g.value != "false") {
    corrected = boolean_word(g.value, false);
    why = fmt::format(
        "{} accepts only the lower-case words true and false: \"{}\" is ignored (with an error in the "
        "log), and the program's own setting stays.",
        r.owner, g.value);
  } else {
    return std::nullopt;
  }
  // Correcting to a value that costs speed would make things slower than they are now.
  if (!corrected.empty())
    if (const auto* v = match(r, corrected); v && v->verdict == "costs-speed") corrected.clear();
  auto f = finding("tune-invalid-value", g,
                   fmt::format("{}: {} does not take this value{}", shown(g), r.owner,
                               r.word_reads_as.empty() ? "" : " (it reads as " + r.word_reads_as + ")"),
                   why + " " + about(r));
  if (r.word_reads_as == "0")
    if (const auto* v = match(r, "0"); v && v->verdict == "fine") f.detail += " " + v->says;
  f.fix = {corrected.empty()
               ? fmt::format("Remove it (it does not do what it looks like), or set a value {} reads.", r.owner)
               : fmt::format("Set {}={}, the value {} reads.", g.name, corrected, r.owner)};
  return f;
}

class Judge {
 public:
  Judge(const view::Machine& machine, const kb::Settings& settings, std::vector<Finding>& findings)
      : m(machine), kb(settings), out(findings) {}

  void group(const Group& g) {
    if (const auto* n = kb.find_not_read(g.name)) return not_read(*n, g);
    const auto* r = kb.find(g.name);
    if (!r) return;
    if (g.places.front()->kind == "module" && unknown_param(*r, g)) return;
    std::string corrected;
    if (auto f = rejected(*r, g, corrected)) {
      tune::undo(m, g, corrected, f->fix);
      out.push_back(std::move(*f));
      return;
    }
    if (r->grammar == "workspace") return workspace(*r, g);
    if (r->grammar == "alloc_conf") return alloc_conf(*r, g);
    if (g.name == "nvidia-smi -pl" && power_limit(*r, g)) return;
    const auto* v = match(*r, g.value);
    const bool module = g.places.front()->kind == "module";
    if (v && v->verdict != "fine") {
      const bool slow = v->verdict == "costs-speed";
      auto f = finding(module ? FindingId("tune-kernel-param-no-effect")
                       : slow ? FindingId("tune-costs-speed")
                              : FindingId("tune-no-effect"),
                       g, fmt::format("{}: {}", shown(g), slow ? "costs speed" : "does not do what it is set for"),
                       v->says + " " + about(*r));
      add_param_evidence(g, f);
      f.fix = {slow ? "Remove it, unless this is a debugging session."
                    : "Remove it: it does not do what it was set for."};
      tune::undo(m, g, "", f.fix);
      out.push_back(std::move(f));
      return;
    }
    auto f = finding(module ? FindingId("tune-kernel-param") : FindingId("tune-setting"), g, shown(g),
                     (v ? v->says + " " : std::string()) + about(*r));
    add_param_evidence(g, f);
    out.push_back(std::move(f));
  }

  // What nothing of the knowledge base describes, said rather than guessed.
  void undescribed(const std::vector<Group>& gs) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const auto& g : gs) {
      if (g.places.front()->kind != "env" || kb.find(g.name) || kb.find_not_read(g.name)) continue;
      if (g.name == "CUDA_VISIBLE_DEVICES" || g.name == "CUDA_HOME" || g.name == "CUDA_PATH" || g.name == "CUDA_ROOT")
        continue;  // judged by the device and toolkit rules
      if (seen.insert(g.name).second) names.push_back(g.name);
    }
    if (names.empty()) return;
    auto f = make_finding("tune-not-in-kb");
    f.title =
        fmt::format("{} setting{} the knowledge base does not describe", names.size(), names.size() == 1 ? "" : "s");
    f.detail =
        "These look like CUDA, NCCL or framework settings, but the knowledge base has no record of what they do, "
        "so they are not judged.";
    const auto shown_names = std::min<std::size_t>(names.size(), 40);
    f.evidence = {
        fmt::format("{}{}", fmt::join(names.begin(), names.begin() + static_cast<long>(shown_names), ", "),
                    names.size() > shown_names ? fmt::format(" and {} more", names.size() - shown_names) : "")};
    out.push_back(std::move(f));
  }

 private:
  void not_read(const kb::NotRead& n, const Group& g) {
    auto f = finding(n.proven ? FindingId("tune-not-read") : FindingId("tune-not-read-likely"), g,
                     fmt::format("{}: {}", shown(g),
                                 n.proven ? "nothing reads this variable" : "probably nothing reads this variable"),
                     n.says + (n.claim.empty() ? "" : fmt::format(" It is copied around as \"{}\".", n.claim)) + " " +
                         n.instead + fmt::format(" (Source: {}.)", n.source));
    f.fix = {"Remove it: " + n.instead};
    tune::undo(m, g, "", f.fix);
    out.push_back(std::move(f));
  }

  // A module parameter the loaded module does not have: the kernel ignores it.
  bool unknown_param(const kb::SettingRecord& r, const Group& g) {
    const auto* p = param(g.name);
    if (!p || !p->module_loaded || p->exists) return false;
    const auto module = g.name.substr(0, g.name.find('.'));
    auto f = finding("tune-kernel-param-no-effect", g,
                     fmt::format("{}: the running {} has no such parameter", shown(g), module),
                     fmt::format("/sys/module/{}/parameters has no {}: the kernel ignores it (it logs \"unknown "
                                 "parameter\"). {}",
                                 module, g.name.substr(g.name.find('.') + 1), about(r)));
    f.fix = {"Remove it: the running kernel ignores it."};
    tune::undo(m, g, "", f.fix);
    out.push_back(std::move(f));
    return true;
  }

  const snapshot::ModuleParam* param(const std::string& name) const {
    for (const auto& p : m.snap.settings.module_params)
      if (p.name == name) return &p;
    return nullptr;
  }

  void add_param_evidence(const Group& g, Finding& f) const {
    if (const auto* p = param(g.name); p && p->exists && !p->value.empty())
      f.evidence.push_back(fmt::format("{}: {} (active value)", p->source, p->value));
  }

  // nvidia-smi -pl below the GPU's default limit: the GPU clocks down under load.
  bool power_limit(const kb::SettingRecord& r, const Group& g) {
    const auto watts = tune::read_int(g.value);
    if (!watts.whole) return false;
    std::vector<std::string> lower;
    for (const auto& gpu : m.snap.gpus)
      if (gpu.nvml && gpu.nvml->power_limit_default_w > watts.value)
        lower.push_back(fmt::format("GPU {} ({}): default power limit {} W, now {} W", gpu.nvml->index, gpu.nvml->name,
                                    gpu.nvml->power_limit_default_w, gpu.nvml->power_limit_w));
    if (lower.empty()) return false;
    auto f = finding("tune-costs-speed", g, fmt::format("{}: below the GPU's default power limit", shown(g)),
                     fmt::format("A {} W limit is below the default, so the GPU lowers its clocks whenever it would "
                                 "draw more. {}",
                                 watts.value, about(r)));
    f.evidence.insert(f.evidence.end(), lower.begin(), lower.end());
    f.fix = {
        "Remove the command that lowers the limit, unless the power budget requires it; nvidia-smi -pl with the "
        "default limit restores it now."};
    tune::undo(m, g, "", f.fix);
    out.push_back(std::move(f));
    return true;
  }

  void workspace(const kb::SettingRecord& r, const Group& g) {
    const auto w = tune::read_workspace(g.value);
    if (!w.parsed()) {
      auto f = finding("tune-invalid-value", g, fmt::format("{}: PyTorch cannot parse it", shown(g)),
                       "PyTorch looks for :SIZE:COUNT pairs (SIZE in KiB) and finds none: it warns \"Could not parse "
                       "CUBLAS_WORKSPACE_CONFIG\" and uses its default workspace, and "
                       "torch.use_deterministic_algorithms(True) raises an error. " +
                           about(r));
      f.fix = {"Set :4096:8 (32 MiB) or :16:8 (128 KiB, may be slower) for reproducible results, or remove it."};
      tune::undo(m, g, "", f.fix);
      out.push_back(std::move(f));
      return;
    }
    std::vector<std::string> parts;
    for (const auto& [kib, count] : w.pairs) parts.push_back(fmt::format("{} × {} KiB", count, kib));
    auto detail =
        fmt::format("{} of cuBLAS workspace per handle ({}). ", tune::bytes_text(w.bytes), fmt::join(parts, " + "));
    detail +=
        w.deterministic_ok
            ? "torch.use_deterministic_algorithms(True) accepts this value."
            : "torch.use_deterministic_algorithms(True) accepts only :4096:8 or :16:8 and raises an error with this "
              "value.";
    if (g.value == ":16:8") detail += " cuBLAS warns that so small a workspace may limit performance.";
    out.push_back(finding("tune-setting", g,
                          fmt::format("{}: {} of cuBLAS workspace", shown(g), tune::bytes_text(w.bytes)),
                          detail + " " + about(r)));
  }

  // The torch installs with a CUDA build; CPU-only ones have no CUDA allocator to read it.
  const snapshot::Framework* torch_at(const std::string& location) const {
    for (const auto& env : m.snap.python.envs)
      for (const auto& fw : env.frameworks)
        if (fw.name == "torch" && fw.location == location) return &fw;
    return nullptr;
  }

  void alloc_conf(const kb::SettingRecord& r, const Group& g) {
    std::vector<const snapshot::LibraryWords*> torches;
    std::vector<std::string> cpu_only;
    for (const auto& w : m.snap.settings.allocator_keys) {
      const auto* fw = torch_at(w.location);
      if (fw && fw->cuda.empty() && !fw->cuda_unknown && fw->hip.empty())
        cpu_only.push_back(fmt::format("torch {} at {}: a CPU-only build", fw->version, w.location));
      else
        torches.push_back(&w);
    }
    if (torches.empty() && !cpu_only.empty()) {
      auto f = finding("tune-no-effect", g, fmt::format("{}: no torch here has a CUDA allocator to read it", shown(g)),
                       "Every torch on this machine is a CPU-only build, which has no CUDA caching allocator: the "
                       "setting does nothing here. " +
                           about(r));
      f.evidence.insert(f.evidence.end(), cpu_only.begin(), cpu_only.end());
      f.fix = {
          "Remove it, or install a CUDA build of torch (cudoctor plan names one) if this machine should use the GPU."};
      tune::undo(m, g, "", f.fix);
      out.push_back(std::move(f));
      return;
    }
    if (torches.empty()) torches.push_back(nullptr);
    std::vector<std::string> problems, notes;
    for (std::size_t i = 0; i < torches.size(); ++i)
      for (const auto* t = torches[i]; const auto& item : tune::read_alloc_conf(g.value, kb, t)) {
        const auto where = t ? fmt::format(" (torch at {})", t->location) : std::string();
        if (!item.problem.empty()) problems.push_back(item.problem + where);
        if (!item.note.empty()) notes.push_back(item.note);
        if (item.problem.empty() && item.known && i == 0)
          notes.push_back(fmt::format("{}: {}{}", item.key, item.known->effect,
                                      item.known->cost.empty() ? "" : "; cost: " + item.known->cost));
      }
    std::sort(problems.begin(), problems.end());
    problems.erase(std::unique(problems.begin(), problems.end()), problems.end());
    std::sort(notes.begin(), notes.end());
    notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
    if (!problems.empty()) {
      auto f =
          finding("tune-alloc-conf-invalid", g, fmt::format("{}: PyTorch rejects it", shown(g)),
                  fmt::format("{}. PyTorch raises an error at the first CUDA allocation, so every CUDA tensor fails "
                              "(\"Unrecognized CachingAllocator option\" in older torch, \"Unrecognized key … in "
                              "CUDA allocator config\" in newer). {}",
                              fmt::join(problems, "; "), about(r)));
      f.fix = {"Correct or remove the options named in the detail."};
      tune::undo(m, g, "", f.fix);
      out.push_back(std::move(f));
      return;
    }
    out.push_back(finding("tune-setting", g, shown(g), fmt::format("{}. {}", fmt::join(notes, ". "), about(r))));
  }

  const view::Machine& m;
  const kb::Settings& kb;
  std::vector<Finding>& out;
};

}  // namespace

std::vector<Finding> tune_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  std::vector<Finding> out;
  const auto gs = groups(m.snap.settings);
  Judge judge(m, kb.settings(), out);
  for (const auto& g : gs) judge.group(g);
  judge.undescribed(gs);
  tune::device_order(m, gs, out);
  tune::persistence(m, out);
  return out;
}

}  // namespace cudoctor::rules
