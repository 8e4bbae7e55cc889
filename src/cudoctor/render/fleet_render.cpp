#include "cudoctor/render/fleet_render.hpp"

#include <fmt/format.h>

#include "cudoctor/render/markdown_cell.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {

namespace {

using util::visible;

// Every string here comes from a report file: escaped before it is printed.
std::string v(const std::string& s, std::size_t max = std::string::npos) {
  return visible(max == std::string::npos ? s : fleet::shorten(s, max));
}

const char* mark(const std::string& severity) {
  return severity == "error" ? "✗" : "!";
}

std::string side_line(char side, const fleet::Digest& d) {
  std::string state = d.healthy ? "healthy" : "broken";
  if (!d.healthy && !d.break_layer.empty()) state += " at " + d.break_layer;
  return fmt::format("{}  {}{}: {}: {}\n", side == 'a' ? 'A' : 'B', v(d.file),
                     d.host.empty() ? "" : " (" + v(d.host) + ")", state, v(d.summary));
}

nlohmann::json change_json(const fleet::Change& c) {
  nlohmann::json j{{"key", c.key}, {"layer", fmt::format("L{}", c.layer)}, {"explains", c.explains}};
  j["a"] = c.a.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.a);
  j["b"] = c.b.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.b);
  return j;
}

nlohmann::json side_json(const fleet::Digest& d) {
  return {{"file", d.file},
          {"host", d.host},
          {"healthy", d.healthy},
          {"break_layer", d.break_layer.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.break_layer)},
          {"break_finding", d.break_finding.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.break_finding)},
          {"summary", d.summary},
          {"tool_version", d.tool_version}};
}

std::string value_or_absent(const std::string& s, std::size_t max) {
  return s.empty() ? "(absent)" : v(s, max);
}

const std::string* fact(const std::vector<fleet::Fact>& facts, std::string_view key) {
  for (const auto& f : facts)
    if (f.key == key) return &f.value;
  return nullptr;
}

}  // namespace

std::string configuration_label(const std::vector<fleet::Fact>& facts) {
  std::vector<std::string> parts;
  const auto* gpu = fact(facts, "gpu0.name");
  const auto* count = fact(facts, "gpu.count");
  if (gpu)
    parts.push_back(*gpu + (count && *count != "1" ? " ×" + *count : ""));
  else if (count)
    parts.push_back(*count == "0" ? "no GPU" : *count == "1" ? "1 GPU" : *count + " GPUs");
  if (const auto* d = fact(facts, "driver.user_space"))
    parts.push_back("driver " + *d);
  else if (const auto* k = fact(facts, "driver.kernel_module"))
    parts.push_back("driver " + *k);
  for (const auto& f : facts) {
    const auto dot = f.key.find('.');
    if (dot == std::string::npos || f.key.substr(dot) != ".version" || f.key == "cudoctor.version") continue;
    parts.push_back(f.key.substr(0, dot) + " " + f.value);
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "(nothing known)" : out;
}

std::string diff_text(const fleet::Digest& a, const fleet::Digest& b, const fleet::Diff& d, const Options& o) {
  std::string out = side_line('a', a) + side_line('b', b);
  const std::size_t room = o.width > 12 ? o.width - 8 : 60;
  if (!d.problems.empty()) {
    out += "\nProblems on one side only:\n";
    for (const auto& p : d.problems) {
      out += "  " +
             wrap(fmt::format("{} {}  {} ({} {}): {}", mark(p.problem.severity), p.side == 'a' ? 'A' : 'B',
                              v(p.problem.id), v(p.problem.layer), v(p.problem.severity), v(p.problem.title)),
                  o.width - 2, "       ") +
             "\n";
      if (!p.because.empty()) {
        std::string keys;
        for (const auto& k : p.because) keys += (keys.empty() ? "" : ", ") + v(k);
        out += "       " + wrap("behind it: " + keys, o.width - 7, "       ") + "\n";
      } else {
        out += "       no differing fact names it: a state of that machine, not its set-up\n";
      }
      if (!p.problem.command.empty()) out += "       fix: " + v(p.problem.command) + "\n";
    }
  }
  if (d.changes.empty()) {
    out += "\nNo fact differs.\n";
  } else {
    out += fmt::format("\nWhat differs ({}{}):\n", d.changes.size(),
                       d.problems.empty() ? ", lowest layer first" : "; what is behind a problem first");
    std::size_t shown = 0;
    for (const auto& c : d.changes) {
      if (!o.verbose && shown == 40) {
        out += fmt::format("  … and {} more (-v lists them all)\n", d.changes.size() - shown);
        break;
      }
      ++shown;
      out += fmt::format("  {} (L{})\n", v(c.key), c.layer);
      out += "    A  " + value_or_absent(c.a, room) + "\n";
      out += "    B  " + value_or_absent(c.b, room) + "\n";
      if (!c.explains.empty()) {
        std::string ids;
        for (const auto& id : c.explains) ids += (ids.empty() ? "" : ", ") + v(id);
        out += "       ← behind " + ids + "\n";
      }
    }
  }
  out += fmt::format(
      "\n{} facts the same. Not compared: temperatures, clocks, utilisation, memory in use, timings, host names, "
      "GPU UUIDs.\n",
      d.same);
  if (a.tool_version != b.tool_version)
    out += fmt::format(
        "Written by different cudoctor versions ({} and {}): a problem on one side only may be a "
        "check the other version lacks.\n",
        v(a.tool_version), v(b.tool_version));
  return out;
}

nlohmann::json diff_json(const fleet::Digest& a, const fleet::Digest& b, const fleet::Diff& d) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : d.problems)
    problems.push_back({{"side", std::string(1, p.side)},
                        {"id", p.problem.id},
                        {"layer", p.problem.layer},
                        {"severity", p.problem.severity},
                        {"title", p.problem.title},
                        {"because", p.because},
                        {"fix_command", p.problem.command}});
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : d.changes) changes.push_back(change_json(c));
  return {{"a", side_json(a)}, {"b", side_json(b)}, {"problems", problems}, {"changes", changes}, {"same", d.same}};
}

std::string diff_markdown(const fleet::Digest& a, const fleet::Digest& b, const fleet::Diff& d) {
  std::string out = "## cudoctor diff\n\n| | report | host | verdict |\n|---|---|---|---|\n";
  for (const auto* s : {&a, &b})
    out += fmt::format("| {} | `{}` | {} | {} |\n", s == &a ? 'A' : 'B', markdown_cell(s->file), markdown_cell(s->host),
                       markdown_cell(s->summary));
  if (!d.problems.empty()) {
    out += "\n### Problems on one side only\n\n";
    for (const auto& p : d.problems) {
      out += fmt::format("- {} **{}** `{}` ({}): {}", p.problem.severity == "error" ? "❌" : "⚠️",
                         p.side == 'a' ? 'A' : 'B', markdown_cell(p.problem.id), markdown_cell(p.problem.layer),
                         markdown_cell(p.problem.title));
      if (!p.because.empty()) {
        std::string keys;
        for (const auto& k : p.because) keys += (keys.empty() ? "" : ", ") + ("`" + markdown_cell(k) + "`");
        out += " — behind it: " + keys;
      }
      out += "\n";
    }
  }
  out += "\n### What differs\n\n";
  if (d.changes.empty()) return out + "No fact differs.\n";
  out += "| fact | layer | A | B | behind |\n|---|---|---|---|---|\n";
  for (const auto& c : d.changes) {
    std::string ids;
    for (const auto& id : c.explains) ids += (ids.empty() ? "" : ", ") + markdown_cell(id);
    out += fmt::format("| `{}` | L{} | {} | {} | {} |\n", markdown_cell(c.key), c.layer,
                       c.a.empty() ? "—" : markdown_cell(c.a), c.b.empty() ? "—" : markdown_cell(c.b), ids);
  }
  return out + fmt::format("\n{} facts the same.\n", d.same);
}

std::string fleet_text(const fleet::FleetReport& r, const Options& o) {
  const std::size_t limit = o.verbose ? std::string::npos : 10;
  const std::size_t room = o.width > 14 ? o.width - 10 : 60;
  std::string out = fmt::format("{} report{}: {} healthy, {} broken, in {} configuration{}", r.nodes.size(),
                                r.nodes.size() == 1 ? "" : "s", r.nodes.size() - r.broken, r.broken, r.groups.size(),
                                r.groups.size() == 1 ? "" : "s");
  if (!r.skipped.empty()) out += fmt::format("; {} file{} skipped", r.skipped.size(), r.skipped.size() == 1 ? "" : "s");
  out += "\n";
  if (r.broken > 0) {
    out += "\nBroken:\n";
    std::size_t shown = 0;
    for (const auto& n : r.nodes) {
      if (n.healthy) continue;
      if (shown++ == limit) {
        out += fmt::format("  … and {} more (-v lists them all)\n", r.broken - limit);
        break;
      }
      out += "  " +
             wrap(fmt::format("✗ {}  {} {}: {}", v(n.name), v(n.break_layer), v(n.break_finding), v(n.cause)),
                  o.width - 2, "      ") +
             "\n";
      if (!n.command.empty()) out += "      fix: " + v(n.command) + "\n";
    }
  }
  out += "\nConfigurations (the most common first):\n";
  for (std::size_t gi = 0; gi < r.groups.size(); ++gi) {
    const auto& g = r.groups[gi];
    if (gi == limit) {
      out += fmt::format("  … and {} more (-v lists them all)\n", r.groups.size() - limit);
      break;
    }
    std::string head = fmt::format("[{}] {} node{}", gi + 1, g.nodes.size(), g.nodes.size() == 1 ? "" : "s");
    if (g.broken) head += fmt::format(" ({} broken)", g.broken);
    head += ": " + v(configuration_label(g.configuration));
    if (g.nodes.size() <= 3) {
      std::string names;
      for (auto ni : g.nodes) names += (names.empty() ? "" : ", ") + v(r.nodes[ni].name);
      head += " — " + names;
    }
    out += "  " + wrap(head, o.width - 2, "     ") + "\n";
    std::size_t shown = 0;
    for (const auto& c : g.differs) {
      if (shown++ == (o.verbose ? std::string::npos : 4)) {
        out += fmt::format("     … {} more differences (-v)\n", g.differs.size() - 4);
        break;
      }
      // On one line when it fits; else the most common group's value and this one's below.
      const auto line = fmt::format("{}: {} → {}", v(c.key), value_or_absent(c.a, room), value_or_absent(c.b, room));
      if (5 + line.size() <= o.width)
        out += "     " + line + "\n";
      else
        out += fmt::format("     {}\n       [1]  {}\n       here {}\n", v(c.key), value_or_absent(c.a, room),
                           value_or_absent(c.b, room));
    }
    shown = 0;
    for (const auto& ol : g.outliers) {
      if (shown++ == (o.verbose ? std::string::npos : 5)) {
        out += fmt::format("     … {} more outliers (-v)\n", g.outliers.size() - 5);
        break;
      }
      std::string what;
      for (const auto& id : ol.extra) what += (what.empty() ? "" : ", ") + ("+" + v(id));
      for (const auto& id : ol.lacking) what += (what.empty() ? "" : ", ") + ("-" + v(id));
      std::string state;
      for (const auto& c : ol.state)
        state += (state.empty() ? "" : "; ") + v(c.key) + " " + value_or_absent(c.b, room / 2);
      out +=
          "     " +
          wrap(fmt::format("outlier {}: {}{}", v(r.nodes[ol.node].name), what, state.empty() ? "" : " (" + state + ")"),
               o.width - 5, "       ") +
          "\n";
    }
  }
  if (!r.problem_counts.empty()) {
    std::string line = "Problems:";
    for (const auto& [id, n] : r.problem_counts) line += fmt::format(" {} on {},", v(id), n);
    line.pop_back();
    out += "\n" + wrap(line, o.width, "  ") + "\n";
  }
  if (!r.skipped.empty()) {
    out += "\nSkipped (not in the counts above):\n";
    for (const auto& s : r.skipped) out += "  " + wrap(v(s.file) + ": " + v(s.reason), o.width - 2, "    ") + "\n";
  }
  if (r.versions.size() > 1) {
    std::string line;
    for (const auto& [ver, n] : r.versions) line += fmt::format(" {} ({}),", v(ver), n);
    line.pop_back();
    out += "\nWritten by different cudoctor versions:" + line + "\n";
  }
  return out;
}

nlohmann::json fleet_json(const fleet::FleetReport& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : r.nodes)
    nodes.push_back(
        {{"name", n.name},
         {"file", n.file},
         {"healthy", n.healthy},
         {"break_layer", n.break_layer.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.break_layer)},
         {"break_finding", n.break_finding.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.break_finding)},
         {"cause", n.healthy ? "" : n.cause},
         {"fix_command", n.command},
         {"problems", *n.problems},
         {"group", n.group + 1}});
  nlohmann::json groups = nlohmann::json::array();
  for (std::size_t gi = 0; gi < r.groups.size(); ++gi) {
    const auto& g = r.groups[gi];
    nlohmann::json members = nlohmann::json::array();
    for (auto ni : g.nodes) members.push_back(r.nodes[ni].name);
    nlohmann::json configuration = nlohmann::json::object();
    for (const auto& f : g.configuration) configuration[f.key] = f.value;
    nlohmann::json differs = nlohmann::json::array();
    for (const auto& c : g.differs) differs.push_back(change_json(c));
    nlohmann::json outliers = nlohmann::json::array();
    for (const auto& ol : g.outliers) {
      nlohmann::json state = nlohmann::json::array();
      for (const auto& c : ol.state) state.push_back(change_json(c));
      outliers.push_back(
          {{"node", r.nodes[ol.node].name}, {"extra", ol.extra}, {"lacking", ol.lacking}, {"state", state}});
    }
    groups.push_back({{"id", gi + 1},
                      {"label", configuration_label(g.configuration)},
                      {"nodes", members},
                      {"broken", g.broken},
                      {"configuration", configuration},
                      {"differs_from_most_common", differs},
                      {"outliers", outliers}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : r.skipped) skipped.push_back({{"file", s.file}, {"reason", s.reason}});
  return {{"reports", r.nodes.size()}, {"healthy", r.nodes.size() - r.broken},
          {"broken", r.broken},        {"nodes", nodes},
          {"groups", groups},          {"problems", r.problem_counts},
          {"skipped", skipped},        {"tool_versions", r.versions}};
}

std::string fleet_markdown(const fleet::FleetReport& r) {
  std::string out = fmt::format("## cudoctor fleet: {} reports, {} healthy, {} broken, {} configurations\n\n",
                                r.nodes.size(), r.nodes.size() - r.broken, r.broken, r.groups.size());
  if (r.broken) {
    out += "### Broken\n\n| node | layer | finding | cause | fix |\n|---|---|---|---|---|\n";
    for (const auto& n : r.nodes)
      if (!n.healthy)
        out += fmt::format("| {} | {} | `{}` | {} | {} |\n", markdown_cell(n.name), markdown_cell(n.break_layer),
                           markdown_cell(n.break_finding), markdown_cell(n.cause),
                           n.command.empty() ? "" : "`" + markdown_cell(n.command) + "`");
    out += "\n";
  }
  out += "### Configurations\n\n| # | nodes | broken | configuration | differs from #1 |\n|---|---|---|---|---|\n";
  for (std::size_t gi = 0; gi < r.groups.size(); ++gi) {
    const auto& g = r.groups[gi];
    std::string differs;
    for (const auto& c : g.differs)
      differs += (differs.empty() ? "" : "<br>") +
                 ("`" + markdown_cell(c.key) + "`: " + markdown_cell(c.a) + " → " + markdown_cell(c.b));
    out += fmt::format("| {} | {} | {} | {} | {} |\n", gi + 1, g.nodes.size(), g.broken,
                       markdown_cell(configuration_label(g.configuration)), differs);
  }
  if (!r.skipped.empty()) {
    out += "\n### Skipped\n\n";
    for (const auto& s : r.skipped) out += fmt::format("- `{}`: {}\n", markdown_cell(s.file), markdown_cell(s.reason));
  }
  return out;
}

}  // namespace cudoctor::render
