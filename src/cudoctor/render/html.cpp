#include "cudoctor/render/html.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/render/fleet_render.hpp"
#include "cudoctor/render/html_page.hpp"
#include "cudoctor/rules/catalog.hpp"

namespace cudoctor::render {
namespace {

using html_page::escape;
using html_page::h;
using rules::Finding;
using rules::Layer;
using rules::Severity;

std::string badge(Severity s) {
  return fmt::format("<span class=\"badge {0}\">{0}</span>", rules::to_string(s));
}

std::string plural(std::size_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// Lines in a <pre><code>, one command a line, as markdown's ```sh blocks hold them.
std::string commands(const std::vector<std::string>& lines, const char* cls) {
  std::string out = fmt::format("<pre class=\"{}\"><code>", cls);
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + h(lines[i]);
  return out + "</code></pre>\n";
}

// Each finding's anchor is its place in the report: an id may be named twice.
std::string anchor(std::size_t index) {
  return fmt::format("f{}", index + 1);
}

std::size_t index_of(const report::Report& r, const std::string& id) {
  for (std::size_t i = 0; i < r.findings.size(); ++i)
    if (r.findings[i].id == id) return i;
  return r.findings.size();
}

// "follows from the L1 break", as the text report says it, linked to the cause.
std::string follows(const Finding& f, const report::Report& r) {
  if (f.follows_from.empty()) return "";
  const auto ci = index_of(r, f.follows_from);
  if (ci == r.findings.size()) return fmt::format(" <span class=\"follows\">follows from {}</span>", h(f.follows_from));
  const auto& cause = r.findings[ci];
  const auto what = cause.layer != f.layer
                        ? fmt::format("the {} {}", rules::to_string(cause.layer),
                                      f.follows_from == r.verdict.break_finding ? "break" : h(f.follows_from))
                        : h(f.follows_from);
  return fmt::format(" <span class=\"follows\">follows from <a href=\"#{}\">{}</a></span>", anchor(ci), what);
}

// A finding: its line (badge, title, id) always shown; what it rests on and the fix a click
// away, open for a problem.
void finding(std::string& out, std::size_t index, const report::Report& r) {
  const auto& f = r.findings[index];
  const bool problem = report::is_problem(f);
  const bool is_break = !r.verdict.healthy && f.id == r.verdict.break_finding && index == index_of(r, f.id);
  std::string line = badge(f.severity) + " <span class=\"title\">" + h(f.title) + "</span> <code class=\"id\">" +
                     h(f.id) + "</code>" + follows(f, r);
  if (is_break) line += " <span class=\"badge break\">break point</span>";
  std::string body;
  if (!f.detail.empty()) body += "<p class=\"detail\">" + h(f.detail) + "</p>\n";
  if (!f.fix.text.empty()) body += "<p class=\"fix\"><strong>Fix:</strong> " + h(f.fix.text) + "</p>\n";
  if (!f.fix.commands.empty()) body += commands(f.fix.commands, "commands");
  if (!f.fix.checks.empty()) body += "<p><strong>Check:</strong></p>\n" + commands(f.fix.checks, "checks");
  if (!f.evidence.empty()) {
    body += "<p><strong>Evidence:</strong></p>\n<ul class=\"evidence\">\n";
    for (const auto& e : f.evidence) body += "<li><code>" + h(e) + "</code></li>\n";
    body += "</ul>\n";
  }
  const auto cls = fmt::format("finding {}{}", rules::to_string(f.severity), problem ? " problem" : "");
  if (body.empty()) {
    out += fmt::format("<div class=\"{}\" id=\"{}\"><div class=\"row\">{}</div></div>\n", cls, anchor(index), line);
    return;
  }
  body += "<p class=\"muted\">Documented in " + h(rules::docs_anchor(f.id)) + "</p>\n";
  out += fmt::format(
      "<details class=\"{}\" id=\"{}\"{}>\n<summary>{}</summary>\n<div class=\"body\">\n{}</div>\n</details>\n", cls,
      anchor(index), problem ? " open" : "", line, body);
}

std::string host_line(const report::Report& r) {
  const auto& host = r.snapshot.host;
  std::vector<std::string> parts;
  if (!host.hostname.empty()) parts.push_back("<strong>" + h(host.hostname) + "</strong>");
  if (!host.os_pretty_name.empty())
    parts.push_back(h(host.os_pretty_name));
  else if (!host.os_id.empty())
    parts.push_back(h(host.os_id + " " + host.os_version));
  if (!host.kernel.empty()) parts.push_back("kernel " + h(host.kernel));
  if (!host.arch.empty()) parts.push_back(h(host.arch));
  parts.push_back(r.snapshot.root == "/" || r.snapshot.root.empty() ? "this machine"
                                                                    : "root <code>" + h(r.snapshot.root) + "</code>");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out;
}

// The GPUs by name, as NVML or else pci.ids names them: "NVIDIA H200 ×8".
std::string gpu_line(const report::Report& r) {
  std::vector<std::pair<std::string, std::size_t>> names;
  for (const auto& g : r.snapshot.gpus) {
    auto name = g.nvml && !g.nvml->name.empty() ? g.nvml->name : g.pci.device_name;
    if (name.empty()) name = fmt::format("NVIDIA GPU [{:04x}:{:04x}]", g.pci.vendor_id, g.pci.device_id);
    auto it = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
    if (it == names.end())
      names.emplace_back(name, 1);
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [name, n] : names)
    out += (out.empty() ? "" : ", ") + h(name) + (n > 1 ? fmt::format(" ×{}", n) : "");
  return out.empty() ? "no NVIDIA GPU found" : out;
}

// The problems in report order, each linked to its finding: the text report's summary.
void summary(std::string& out, const report::Report& r) {
  const auto problems = report::problems(r);
  if (problems.empty()) return;
  std::size_t errors = 0;
  for (const auto* f : problems) errors += f->severity == Severity::error;
  std::string counts = errors ? plural(errors, "error") : "";
  if (problems.size() > errors) counts += (errors ? ", " : "") + plural(problems.size() - errors, "warning");
  out += fmt::format("<section id=\"problems\">\n<h2>{} ({})</h2>\n<ul>\n", plural(problems.size(), "problem"), counts);
  for (const auto* f : problems) {
    const auto where = rules::is_tuning(f->id) ? std::string("tuning") : std::string(rules::to_string(f->layer));
    out += fmt::format("<li>{} {} <a href=\"#{}\">{}</a></li>\n", badge(f->severity), where,
                       anchor(static_cast<std::size_t>(f - r.findings.data())), h(f->title));
  }
  out += "</ul>\n</section>\n";
}

void python_envs(std::string& out, const report::Report& r) {
  const auto& envs = r.snapshot.python.envs;
  if (envs.empty()) return;
  out += "<details class=\"envs\"><summary class=\"muted\">" + plural(envs.size(), "Python environment") +
         " inspected</summary>\n<ul>\n";
  for (const auto& e : envs) {
    std::string frameworks;
    for (const auto& f : e.frameworks) frameworks += (frameworks.empty() ? "" : ", ") + h(f.name + " " + f.version);
    out += "<li><code>" + h(e.prefix) + "</code> (" + h(e.kind) + ")" + (frameworks.empty() ? "" : ": " + frameworks) +
           "</li>\n";
  }
  out += "</ul>\n</details>\n";
}

void layers(std::string& out, const report::Report& r) {
  for (const auto layer : r.checked_layers) {
    out += fmt::format("<section class=\"layer\" id=\"{}\">\n<h2>{} {}{}</h2>\n", rules::to_string(layer),
                       rules::to_string(layer), rules::layer_name(layer),
                       r.verdict.break_layer == layer ? " <span class=\"badge break\">break point</span>" : "");
    bool any = false;
    for (std::size_t i = 0; i < r.findings.size(); ++i)
      if (r.findings[i].layer == layer && !rules::is_tuning(r.findings[i].id)) {
        finding(out, i, r);
        any = true;
      }
    if (!any) out += "<p class=\"muted\">Nothing to report.</p>\n";
    if (layer == Layer::L3) python_envs(out, r);
    out += "</section>\n";
  }
  bool any = false;
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    if (!rules::is_tuning(r.findings[i].id)) continue;
    if (!any) out += "<section class=\"layer\" id=\"tuning\">\n<h2>Tuning</h2>\n";
    any = true;
    finding(out, i, r);
  }
  if (any) out += "</section>\n";
  std::string skipped;
  for (int l = 0; l <= static_cast<int>(Layer::L5); ++l) {
    const auto layer = static_cast<Layer>(l);
    if (std::find(r.checked_layers.begin(), r.checked_layers.end(), layer) == r.checked_layers.end())
      skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", rules::to_string(layer), rules::layer_name(layer));
  }
  const auto& why_not = r.snapshot.runtime.not_run_reason;
  if (!skipped.empty())
    out += "<p class=\"muted\">" +
           (!r.snapshot.runtime.ran && !why_not.empty() ? fmt::format("{} skipped ({}).", skipped, h(why_not))
                                                        : "Not inspected by this version: " + skipped + ".") +
           "</p>\n";
}

// "Generated 2026-12-02 21:10 UTC by cudoctor check --format html", as markdown writes it.
std::string generated(const Options& o) {
  if (o.generated.empty() && o.command_line.empty()) return "";
  return "<p class=\"meta\">" + (o.generated.empty() ? std::string("Generated") : "Generated " + h(o.generated)) +
         (o.command_line.empty() ? "" : " by <code>" + h(o.command_line) + "</code>") + "</p>\n";
}

}  // namespace

std::string html(const report::Report& r, const Options& o) {
  const auto& host = r.snapshot.host;
  std::string at;
  if (r.verdict.break_layer)
    at = fmt::format(" at {} {}", rules::to_string(*r.verdict.break_layer), rules::layer_name(*r.verdict.break_layer));
  const auto state = r.verdict.healthy ? std::string("healthy") : "broken" + at;
  std::string out = html_page::head(fmt::format("cudoctor {} report{}: {}", h(o.tool_version),
                                                host.hostname.empty() ? "" : " · " + h(host.hostname), state));
  out += html_page::tools(false);
  out += "<header>\n<h1>cudoctor " + h(o.tool_version) + " report</h1>\n<p class=\"meta\">" + host_line(r) +
         "</p>\n<p class=\"meta\">GPUs: " + gpu_line(r) + "</p>\n" + generated(o) + "</header>\n";
  if (!o.redacted)
    out +=
        "<p class=\"hint\">Before posting it in public: <code>cudoctor --format html --redact</code> replaces the host "
        "name, the user names and the home directories.</p>\n";
  out += fmt::format("<section class=\"verdict {}\" id=\"verdict\">\n<h2>{}</h2>\n<p class=\"summary\">{}</p>\n",
                     r.verdict.healthy ? "healthy" : "broken", r.verdict.healthy ? "✓ Healthy" : "✗ Broken" + at,
                     h(r.verdict.summary));
  const auto bi = index_of(r, r.verdict.break_finding);
  if (!r.verdict.healthy && bi < r.findings.size()) {
    const auto& b = r.findings[bi];
    out += fmt::format("<p class=\"break\">Break: <a href=\"#{}\">{}</a> <code class=\"id\">{}</code></p>\n",
                       anchor(bi), h(b.title), h(b.id));
    if (!b.fix.text.empty())
      out += fmt::format("<p><strong>Fix:</strong> {}{}</p>\n", h(b.fix.text),
                         b.fix.commands.empty() ? "" : fmt::format(" <a href=\"#{}\">The commands</a>", anchor(bi)));
  }
  out += "</section>\n";
  summary(out, r);
  layers(out, r);
  // The facts once each, as markdown embeds them: the nested copies of the top-level lists go.
  auto facts = report_json(r);
  facts["toolkit"].erase("toolkits");
  facts["python"].erase("envs");
  out += "<details class=\"facts\" id=\"facts\">\n<summary>All facts (JSON)</summary>\n<pre><code>" +
         escape(json_text(facts)) + "</code></pre>\n</details>\n";
  return out + html_page::tail(fmt::format("cudoctor {}{}", h(o.tool_version),
                                           r.kb_date.empty() ? "" : " · knowledge base " + h(r.kb_date)));
}

namespace {

std::string node_link(const fleet::FleetReport& r, std::size_t ni) {
  return fmt::format("<a href=\"#n{}\">{}</a>", ni + 1, h(r.nodes[ni].name));
}

std::string value_or_absent(const std::string& s) {
  return s.empty() ? "<span class=\"muted\">(absent)</span>" : "<code>" + h(s) + "</code>";
}

std::string ids(const std::vector<std::string>& v, const char* sign) {
  std::string out;
  for (const auto& id : v) out += (out.empty() ? "" : ", ") + ("<code>" + std::string(sign) + h(id) + "</code>");
  return out;
}

void broken_nodes(std::string& out, const fleet::FleetReport& r) {
  if (!r.broken) return;
  out +=
      "<section id=\"broken\">\n<h2>Broken</h2>\n<table>\n<thead><tr><th>node</th><th>layer</th><th>finding</th>"
      "<th>cause</th><th>first fix</th></tr></thead>\n<tbody>\n";
  for (std::size_t ni = 0; ni < r.nodes.size(); ++ni) {
    const auto& n = r.nodes[ni];
    if (n.healthy) continue;
    out += fmt::format(
        "<tr class=\"broken-node\"><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
        node_link(r, ni), h(n.break_layer), h(n.break_finding), h(n.cause),
        n.command.empty() ? "<span class=\"muted\">—</span>" : "<code>" + h(n.command) + "</code>");
  }
  out += "</tbody>\n</table>\n</section>\n";
}

void group(std::string& out, const fleet::FleetReport& r, std::size_t gi) {
  const auto& g = r.groups[gi];
  out += fmt::format("<section class=\"group\" id=\"g{}\">\n<h3>[{}] {}{}: {}</h3>\n", gi + 1, gi + 1,
                     plural(g.nodes.size(), "node"), g.broken ? fmt::format(" ({} broken)", g.broken) : "",
                     h(configuration_label(g.configuration)));
  std::string names;
  for (const auto ni : g.nodes) names += (names.empty() ? "" : ", ") + node_link(r, ni);
  out += g.nodes.size() <= 3
             ? "<p>" + names + "</p>\n"
             : "<details><summary>" + plural(g.nodes.size(), "node") + "</summary>\n<p>" + names + "</p>\n</details>\n";
  if (!g.differs.empty()) {
    out +=
        "<table class=\"differs\">\n<thead><tr><th>differs from [1]</th><th>layer</th><th>[1]</th><th>here</th></tr>"
        "</thead>\n<tbody>\n";
    for (const auto& c : g.differs)
      out += fmt::format("<tr><td><code>{}</code></td><td>L{}</td><td>{}</td><td>{}</td></tr>\n", h(c.key), c.layer,
                         value_or_absent(c.a), value_or_absent(c.b));
    out += "</tbody>\n</table>\n";
  }
  if (!g.outliers.empty()) out += "<ul class=\"outliers\">\n";
  for (const auto& ol : g.outliers) {
    std::string what = ids(ol.extra, "+");
    if (!ol.lacking.empty()) what += (what.empty() ? "" : ", ") + ids(ol.lacking, "-");
    std::string state;
    for (const auto& c : ol.state) state += (state.empty() ? "" : "; ") + h(c.key) + " " + value_or_absent(c.b);
    out += "<li>outlier " + node_link(r, ol.node) + ": " + what + (state.empty() ? "" : " (" + state + ")") + "</li>\n";
  }
  if (!g.outliers.empty()) out += "</ul>\n";
  out += "<details><summary>Configuration</summary>\n<table>\n";
  for (const auto& f : g.configuration)
    out += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td></tr>\n", h(f.key), h(f.value));
  out += "</table>\n</details>\n</section>\n";
}

// A node's line, and a click away its file, configuration, problems, fix and state.
void node(std::string& out, const fleet::FleetReport& r, std::size_t ni) {
  const auto& n = r.nodes[ni];
  out += fmt::format(
      "<details class=\"node{}\" id=\"n{}\">\n<summary>{} <strong>{}</strong>", n.healthy ? "" : " broken", ni + 1,
      n.healthy ? "<span class=\"badge ok\">healthy</span>" : "<span class=\"badge error\">broken</span>", h(n.name));
  if (!n.healthy) out += " " + h(n.break_layer) + " <code>" + h(n.break_finding) + "</code>: " + h(n.cause);
  out += fmt::format(
      "</summary>\n<div class=\"body\">\n<p>File <code>{}</code> · configuration <a href=\"#g{}\">[{}]</a></p>\n",
      h(n.file), n.group + 1, n.group + 1);
  if (!n.command.empty()) out += "<p><strong>First fix:</strong></p>\n" + commands({n.command}, "commands");
  out += n.problems && !n.problems->empty() ? "<p>Problems: " + ids(*n.problems, "") + "</p>\n"
                                            : "<p class=\"muted\">No problems.</p>\n";
  if (n.state && !n.state->empty()) {
    out += "<p>State:</p>\n<table class=\"state\">\n";
    for (const auto& f : *n.state)
      out += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td></tr>\n", h(f.key), h(f.value));
    out += "</table>\n";
  }
  out += "</div>\n</details>\n";
}

}  // namespace

std::string fleet_html(const fleet::FleetReport& r, const Options& o) {
  const auto healthy = r.nodes.size() - r.broken;
  auto line = fmt::format("{}: {} healthy, {} broken, in {}", plural(r.nodes.size(), "report"), healthy, r.broken,
                          plural(r.groups.size(), "configuration"));
  if (!r.skipped.empty()) line += fmt::format("; {} skipped", plural(r.skipped.size(), "file"));
  std::string out = html_page::head("cudoctor fleet: " + line);
  out += html_page::tools(true);
  out += "<header>\n<h1>cudoctor fleet</h1>\n" + generated(o) + "</header>\n";
  out += fmt::format("<section class=\"verdict {}\" id=\"verdict\">\n<h2>{}</h2>\n</section>\n",
                     r.broken || !r.skipped.empty() ? "broken" : "healthy", line);
  out += "<div class=\"counts\">";
  struct Count {
    const char* id;
    const char* what;
    std::size_t n;
    const char* cls;  // how a count that is not 0 is coloured
  };
  const Count counts[] = {{"reports", "reports", r.nodes.size(), ""},
                          {"healthy", "healthy", healthy, " good"},
                          {"broken", "broken", r.broken, " bad"},
                          {"configurations", "configurations", r.groups.size(), ""},
                          {"skipped", "files skipped", r.skipped.size(), " bad"}};
  for (const auto& c : counts)
    out += fmt::format("<div class=\"count{}\" id=\"count-{}\"><b>{}</b>{}</div>", c.n ? c.cls : "", c.id, c.n, c.what);
  out += "</div>\n";
  broken_nodes(out, r);
  out += "<section id=\"configurations\">\n<h2>Configurations (the most common first)</h2>\n";
  for (std::size_t gi = 0; gi < r.groups.size(); ++gi) group(out, r, gi);
  out += "</section>\n";
  if (!r.problem_counts.empty()) {
    out +=
        "<section id=\"problem-counts\">\n<h2>Problems</h2>\n<table>\n<thead><tr><th>finding</th><th>nodes</th></tr>"
        "</thead>\n<tbody>\n";
    for (const auto& [id, n] : r.problem_counts)
      out += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>\n", h(id), n);
    out += "</tbody>\n</table>\n</section>\n";
  }
  out += "<section id=\"nodes\">\n<h2>Nodes</h2>\n";
  for (std::size_t ni = 0; ni < r.nodes.size(); ++ni) node(out, r, ni);
  out += "</section>\n";
  if (!r.skipped.empty()) {
    out += "<section id=\"skipped\">\n<h2>Skipped (not in the counts above)</h2>\n<ul>\n";
    for (const auto& s : r.skipped) out += "<li><code>" + h(s.file) + "</code>: " + h(s.reason) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  if (r.versions.size() > 1) {
    out += "<p>Written by different cudoctor versions:";
    for (const auto& [ver, n] : r.versions) out += fmt::format(" {} ({})", h(ver), n);
    out += "</p>\n";
  }
  return out + html_page::tail("cudoctor " + h(o.tool_version));
}

}  // namespace cudoctor::render
