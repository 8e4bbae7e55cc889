// `cudoctor ldd` and `cudoctor archs`: the loader's tree and the fatbin's architectures.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {
namespace {

using util::visible;

std::string reason(const ld::Object& o) {
  const auto rule = ld::to_string(o.lookup.rule);
  if (o.lookup.rule == ld::Rule::rpath || o.lookup.rule == ld::Rule::runpath) {
    const auto colon = o.lookup.detail.rfind(": ");
    return rule + " " + visible(colon == std::string::npos ? "" : o.lookup.detail.substr(colon + 2));
  }
  return visible(rule);
}

// The C and C++ runtime every program loads, which libtree too leaves out unless asked: the
// tree is about the libraries that differ between machines.
bool standard_library(const std::string& soname) {
  static const char* const k_standard[] = {"libc.so.6",
                                           "libm.so.6",
                                           "libdl.so.2",
                                           "libpthread.so.0",
                                           "librt.so.1",
                                           "libresolv.so.2",
                                           "libutil.so.1",
                                           "libgcc_s.so.1",
                                           "libstdc++.so.6",
                                           "ld-linux-x86-64.so.2",
                                           "ld-linux.so.2",
                                           "ld64.so.2",
                                           "ld-linux-aarch64.so.1",
                                           "ld-linux-armhf.so.3",
                                           "libmvec.so.1"};
  for (const char* s : k_standard)
    if (soname == s) return true;
  return false;
}

std::string runs_on_text(const std::optional<RunsOn>& r) {
  if (!r) return "";
  if (r->verdict.runs())
    return fmt::format("  runs on compute capability {}: {}\n", r->cc.str(), r->verdict.describe());
  return fmt::format("  does not run on compute capability {}: no compatible cubin or PTX\n", r->cc.str());
}

}  // namespace

std::string ldd_text(const ld::Tree& t, const Options& o) {
  // Names come from DT_NEEDED strings and paths from the file system: escaped, so a hostile
  // file cannot write to the terminal or add lines.
  const auto paint = [&](const char* code, const std::string& s) {
    return o.color ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
  };
  const auto at = [&](int i) -> const ld::Object& { return t.objects[static_cast<std::size_t>(i)]; };
  std::string out = visible(t.objects[0].path) + "\n";
  std::vector<bool> shown(t.objects.size(), false);
  std::vector<bool> listed(t.objects.size(), false);  // not-found objects named in the output
  std::vector<std::string> hidden;
  shown[0] = true;
  // Hidden unless -v: a standard library found whole, needing only standard libraries.
  const auto hide = [&](int idx) {
    const auto& c = at(idx);
    if (o.verbose || !c.found || !c.missing_versions.empty() || !standard_library(c.soname.empty() ? c.name : c.soname))
      return false;
    for (const auto& [n, j] : c.needs)
      if (!standard_library(n) || !at(j).found) return false;
    return true;
  };
  std::function<void(int, const std::string&)> walk = [&](int i, const std::string& prefix) {
    // Depth-first in DT_NEEDED order, each library once where it is first read (libtree's
    // order); where glibc found it is the rule in brackets, whoever asked first.
    std::vector<std::pair<std::string, int>> children;
    for (const auto& [name, idx] : at(i).needs) {
      const auto u = static_cast<std::size_t>(idx);
      if (at(idx).found && shown[u] && !o.verbose) continue;
      if (hide(idx)) {
        if (!shown[u] && std::find(hidden.begin(), hidden.end(), name) == hidden.end()) hidden.push_back(name);
        shown[u] = true;
        continue;
      }
      children.emplace_back(name, idx);
    }
    for (std::size_t k = 0; k < children.size(); ++k) {
      const bool last = k + 1 == children.size();
      const auto& [name, idx] = children[k];
      const auto u = static_cast<std::size_t>(idx);
      const auto& c = at(idx);
      const auto below = prefix + (last ? "    " : "│   ");
      std::string line = prefix + (last ? "└── " : "├── ") + visible(name);
      if (!c.found) {
        line += " => " + paint("31;1", "not found");
        if (!listed[u]) {
          std::string dirs;
          for (const auto& d : c.lookup.searched) dirs += (dirs.empty() ? "" : " ") + visible(d);
          if (!dirs.empty()) line += "\n" + below + paint("2", "searched, in order: " + dirs);
          line += "\n" + below +
                  paint("2", fmt::format("(cudoctor ldd {} --why {})", visible(t.objects[0].path), visible(name)));
        }
        listed[u] = true;
        out += line + "\n";
        continue;
      }
      const bool first = !shown[u];
      line += " => " + visible(c.path) + "  " + paint("2", "[" + (first ? reason(c) : "already loaded") + "]");
      for (const auto& v : c.missing_versions)
        line += "\n" + below + paint("31", "  version " + visible(v) + " not found");
      out += line + "\n";
      if (first) {
        shown[u] = true;
        walk(idx, below);
      }
    }
  };
  walk(0, "");
  // What no DT_NEEDED names but is loaded all the same: the interpreter (PT_INTERP).
  for (std::size_t i = 1; i < t.objects.size(); ++i)
    if (!t.objects[i].found && !listed[i]) {
      listed[i] = true;
      const auto& x = t.objects[i];
      out += visible(x.name) + " => " + paint("31;1", "not found") + "  " +
             paint("2", "[" + visible(ld::to_string(x.lookup.rule)) +
                            (x.lookup.detail.empty() ? "" : ": " + visible(x.lookup.detail)) + "]") +
             "\n";
    }
  std::size_t missing = 0, versions = 0;
  for (std::size_t i = 0; i < t.objects.size(); ++i) {
    missing += listed[i];
    versions += t.objects[i].missing_versions.size();
  }
  for (const auto& v : t.objects[0].missing_versions)
    out += paint("31", "version " + visible(v) + " not found (required by " + visible(t.objects[0].path) + ")") + "\n";
  if (!hidden.empty()) {
    std::string names;
    for (const auto& h : hidden) names += (names.empty() ? "" : " ") + visible(h);
    out += paint("2", wrap(fmt::format("{} standard librar{} not shown ({}; -v shows them)", hidden.size(),
                                       hidden.size() == 1 ? "y" : "ies", names),
                           o.width, "  ")) +
           "\n";
  }
  if (missing || versions)
    out += paint("31;1", fmt::format("{} librar{} not found, {} symbol version{} missing", missing,
                                     missing == 1 ? "y" : "ies", versions, versions == 1 ? "" : "s")) +
           "\n";
  return out;
}

std::string ldd_why(const ld::Tree& t, const std::string& lib) {
  std::string out;
  for (const auto& o : t.objects) {
    const bool match =
        o.name == lib || o.soname == lib || (!o.path.empty() && o.path.ends_with("/" + lib)) || o.path == lib;
    if (!match) continue;
    out += fmt::format("{}\n", visible(o.name));
    out += o.found ? fmt::format("  loaded from {}\n  because: {}{}\n", visible(o.path),
                                 visible(ld::to_string(o.lookup.rule)),
                                 o.lookup.detail.empty() ? "" : " (" + visible(o.lookup.detail) + ")")
                   : "  not found\n";
    std::string chain;
    for (int p = o.parent; p >= 0; p = t.objects[static_cast<std::size_t>(p)].parent)
      chain += (chain.empty() ? "" : " <- ") + visible(t.objects[static_cast<std::size_t>(p)].path);
    if (!chain.empty()) out += "  needed by: " + chain + "\n";
    if (!o.lookup.searched.empty()) {
      out += "  searched, in order:\n";
      for (const auto& d : o.lookup.searched) out += "    " + visible(d) + "\n";
    }
    for (const auto& r : o.lookup.rejected)
      out += fmt::format("  passed over {}: {}\n", visible(r.path), visible(r.why));
    for (const auto& v : o.missing_versions) out += "  missing version " + visible(v) + "\n";
  }
  return out;
}

void ldd_json(JsonWriter& w, const ld::Tree& t) {
  // Keys in sorted order: the bytes nlohmann's dump of the same document prints.
  w.begin_object();
  w.key("file");
  w.value(t.objects[0].path);
  w.key("objects");
  w.begin_array();
  for (const auto& o : t.objects) {
    w.begin_object();
    w.key("detail");
    w.value(o.lookup.detail);
    w.key("error");
    w.value(o.error);
    w.key("found");
    w.value(o.found);
    w.key("missing_versions");
    w.strings(o.missing_versions);
    w.key("name");
    w.value(o.name);
    w.key("needs");
    w.begin_array();
    for (const auto& [name, idx] : o.needs) {
      w.begin_object();
      w.key("name");
      w.value(name);
      w.key("object");
      w.value(idx);
      w.end_object();
    }
    w.end_array();
    w.key("parent");
    w.value(o.parent);
    w.key("path");
    if (o.found)
      w.value(o.path);
    else
      w.null();
    w.key("rejected");
    w.begin_array();
    for (const auto& r : o.lookup.rejected) {
      w.begin_object();
      w.key("path");
      w.value(r.path);
      w.key("why");
      w.value(r.why);
      w.end_object();
    }
    w.end_array();
    w.key("rule");
    w.value(ld::to_string(o.lookup.rule));
    w.key("searched");
    w.strings(o.lookup.searched);
    w.key("soname");
    w.value(o.soname);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

std::string archs_text(const std::string& file, const std::optional<elf::Fatbin>& fb,
                       const std::optional<RunsOn>& runs_on) {
  if (!fb) return visible(file) + "\n  no CUDA fatbin (.nv_fatbin)\n" + runs_on_text(runs_on);
  const auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + visible(x);
    return s.empty() ? std::string("none") : s;
  };
  std::size_t compressed = 0;
  for (const auto& e : fb->entries) compressed += e.compressed;
  return fmt::format("{}\n  cubins: {}\n  PTX:    {}\n  {} entries in {} containers, {} compressed\n", visible(file),
                     join(fb->sm_archs()), join(fb->ptx_archs()), fb->entries.size(), fb->containers, compressed) +
         runs_on_text(runs_on);
}

nlohmann::json archs_json(const std::string& file, const std::optional<elf::Fatbin>& fb,
                          const std::optional<RunsOn>& runs_on) {
  nlohmann::json j = {{"file", file}, {"has_fatbin", fb.has_value()}};
  if (runs_on)
    j["runs_on"] = {{"cc", runs_on->cc.str()}, {"runs", runs_on->verdict.runs()}, {"via", runs_on->verdict.describe()}};
  if (!fb) return j;
  j["sm"] = fb->sm_archs();
  j["ptx"] = fb->ptx_archs();
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : fb->entries)
    entries.push_back({{"name", e.name()}, {"kind", e.raw_kind}, {"compressed", e.compressed}, {"size", e.size}});
  j["entries"] = entries;
  j["containers"] = fb->containers;
  return j;
}

}  // namespace cudoctor::render
