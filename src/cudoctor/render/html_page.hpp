#pragma once
// What html.cpp's two pages share: escaping, the page's head with its inline style sheet, and
// the inline script. Private to render/.
#include <string>
#include <string_view>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::render::html_page {

// s with & < > " ' written as character references: safe in text and in a quoted attribute.
inline std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

// Text from the report: made visible as markdown makes it (controls, bidirectional overrides
// and bytes that are not UTF-8 shown escaped), then escaped for HTML.
inline std::string h(std::string_view s) {
  return escape(util::visible(s));
}

// The style sheet. System fonts only: the page fetches nothing.
inline constexpr std::string_view k_style = R"css(
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--card:#f6f8fa;
--ok:#1a7f37;--info:#0969da;--warn:#9a6700;--error:#cf222e;--ok-bg:#dafbe1;--error-bg:#ffebe9}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
--card:#151b23;--ok:#3fb950;--info:#4493f8;--warn:#d29922;--error:#f85149;--ok-bg:#12261e;--error-bg:#25171c}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:75rem;padding:1.5rem 2rem 3rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Liberation Sans",sans-serif}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin:1.8rem 0 .5rem;padding-bottom:.25rem;
border-bottom:1px solid var(--line)}h3{font-size:1.05rem;margin:1rem 0 .4rem}
code,pre{font-family:ui-monospace,"SF Mono",Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace;font-size:.88em}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.55rem .8rem;
overflow-x:auto;margin:.35rem 0}
a{color:var(--info)}.meta{color:var(--muted);margin:.1rem 0}.muted{color:var(--muted)}
.badge{display:inline-block;min-width:3.6em;text-align:center;border-radius:1em;padding:0 .55em;
font-size:.75em;font-weight:700;line-height:1.7;color:#fff;text-transform:uppercase;vertical-align:.1em}
.badge.error{background:var(--error)}.badge.warn{background:var(--warn)}.badge.info{background:var(--info)}
.badge.ok{background:var(--ok)}.badge.break{background:var(--fg);color:var(--bg)}
.verdict{border:1px solid var(--line);border-left:8px solid;border-radius:6px;padding:.7rem 1rem;margin:1rem 0}
.verdict.healthy{border-left-color:var(--ok);background:var(--ok-bg)}
.verdict.broken{border-left-color:var(--error);background:var(--error-bg)}
.verdict h2{border:0;margin:0;padding:0;font-size:1.35rem}.verdict p{margin:.3rem 0}
.hint{border-left:4px solid var(--line);padding:.2rem .8rem;color:var(--muted)}
.finding{border:1px solid var(--line);border-radius:6px;margin:.35rem 0}
.finding.problem.error{border-left:5px solid var(--error)}.finding.problem.warn{border-left:5px solid var(--warn)}
.finding>summary,.finding>.row{padding:.4rem .75rem}.finding>summary{cursor:pointer}
.finding.problem>summary .title{font-weight:600}
.finding .body{padding:0 .9rem .6rem 1.6rem}.finding .body p{margin:.35rem 0}
.id{color:var(--muted)}.follows{color:var(--muted);font-style:italic}
ul.evidence{margin:.2rem 0;padding-left:1.2rem}ul.evidence code{word-break:break-all}
.counts{display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
.count{border:1px solid var(--line);border-radius:6px;padding:.4rem .9rem;min-width:7rem;background:var(--card)}
.count b{display:block;font-size:1.5rem}.count.bad b{color:var(--error)}.count.good b{color:var(--ok)}
table{border-collapse:collapse;width:100%;margin:.4rem 0}
th,td{border-bottom:1px solid var(--line);text-align:left;padding:.3rem .55rem;vertical-align:top}
th{background:var(--card)}td code{word-break:break-all}
.group{border:1px solid var(--line);border-radius:6px;padding:.2rem .9rem .6rem;margin:.6rem 0}
.node>summary{cursor:pointer;padding:.15rem .3rem}.node .body{padding:.1rem 1rem .5rem 1.6rem}
.node.broken>summary{color:var(--error)}.nodes{columns:1}
.tools{position:sticky;top:0;background:var(--bg);padding:.4rem 0;border-bottom:1px solid var(--line);z-index:1}
.tools button,.tools input{font:inherit;padding:.15rem .6rem;margin-right:.4rem}
footer{margin-top:2.5rem;color:var(--muted);font-size:.85em}
)css";

// Expands and collapses every <details>, opens the ones a link points into, and filters the
// fleet's nodes by what their lines say. The page reads the same without it: the bar it works
// is hidden until it runs.
inline constexpr std::string_view k_script = R"js(
(function () {
  var bar = document.getElementById('tools');
  if (!bar) return;
  bar.hidden = false;
  function every(open) {
    document.querySelectorAll('details').forEach(function (d) { d.open = open; });
  }
  document.getElementById('expand').addEventListener('click', function () { every(true); });
  document.getElementById('collapse').addEventListener('click', function () { every(false); });
  function reveal() {
    var e = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
  }
  window.addEventListener('hashchange', reveal);
  reveal();
  var filter = document.getElementById('filter');
  if (!filter) return;
  var nodes = document.querySelectorAll('details.node');
  var shown = document.getElementById('shown');
  function apply() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean), n = 0;
    nodes.forEach(function (d) {
      var text = d.querySelector('summary').textContent.toLowerCase();
      var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
      d.hidden = !hit;
      if (hit) n++;
    });
    shown.textContent = n + ' of ' + nodes.length + ' nodes shown';
  }
  filter.addEventListener('input', apply);
  apply();
})();
)js";

// Everything up to and including <body>: nothing may be fetched (the policy forbids it even
// where a report's text slipped through), so the page reads the same offline.
inline std::string head(const std::string& title) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"cudoctor\">\n<title>" +
      title + "</title>\n<style>";
  out += k_style;
  out += "</style>\n</head>\n<body>\n";
  return out;
}

// The tool bar the script shows; with_filter adds the fleet's node filter.
inline std::string tools(bool with_filter) {
  std::string out =
      "<div class=\"tools\" id=\"tools\" hidden><button type=\"button\" id=\"expand\">Expand all</button>"
      "<button type=\"button\" id=\"collapse\">Collapse all</button>";
  if (with_filter)
    out +=
        "<input type=\"search\" id=\"filter\" placeholder=\"Filter nodes: name, layer, finding id\" size=\"36\" "
        "aria-label=\"Filter nodes\"> <span id=\"shown\" class=\"muted\"></span>";
  return out + "</div>\n";
}

inline std::string tail(const std::string& footer) {
  std::string out = "<footer>" + footer + "</footer>\n<script>";
  out += k_script;
  return out + "</script>\n</body>\n</html>\n";
}

}  // namespace cudoctor::render::html_page
