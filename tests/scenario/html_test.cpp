// `--format html`: one self-contained page for a machine and for a fleet. The page is checked
// as text (everything escaped, nothing it would fetch) and then as a person sees it: loaded in
// headless Chromium with the network blocked, its DOM read after the script ran, a screenshot
// taken (kept in the build directory's html-screenshots/ to look at).
#include "cudoctor/render/html.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "cudoctor/fleet/fleet.hpp"
#include "cudoctor/render/html_page.hpp"
#include "fixture_root.hpp"
#include "fleet_reports.hpp"
#include "machines.hpp"
#include "run_cli.hpp"

namespace fs = std::filesystem;

namespace cudoctor::testing {
namespace {

const char* const k_chromium = "/usr/bin/chromium";

render::Options options() {
  render::Options o;
  o.tool_version = "0.1.0";
  o.generated = "2026-12-02 21:10 UTC";
  o.command_line = "cudoctor check --format html";
  return o;
}

std::string page_of(snapshot::Snapshot s) {
  return render::html(report::build(std::move(s), kb::builtin()), options());
}

// What HTML's serialiser (and render::html) writes for text: & < > as references.
std::string text_escaped(const std::string& s) {
  std::string out;
  for (const char c : s) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

// The text a person reads: the tags taken out, the references read back.
std::string visible_text(const std::string& dom) {
  auto t = std::regex_replace(dom, std::regex("<[^>]*>"), "");
  for (const auto& [ref, c] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", " "}, {"&amp;", "&"}})
    for (std::size_t p; (p = t.find(ref)) != std::string::npos;) t.replace(p, ref.size(), c);
  return t;
}

// Every src= and href= of the page (the report's own text is escaped, so a quote in it cannot
// open an attribute), and whether any element could fetch: <link>, <img>, <iframe>, a
// script with src, CSS url() or @import in the style sheet.
void expect_fetches_nothing(const std::string& page) {
  const std::regex attr(R"re(\s(src|href|srcset|action|data)\s*=\s*"([^"]*)")re", std::regex::icase);
  std::size_t hrefs = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), attr), end; it != end; ++it) {
    const auto name = (*it)[1].str(), value = (*it)[2].str();
    EXPECT_EQ(name, "href") << "nothing is loaded from anywhere: " << it->str();
    EXPECT_TRUE(value.starts_with("#")) << "links stay inside the page: " << it->str();
    EXPECT_EQ(value.find("http://"), std::string::npos) << it->str();
    EXPECT_EQ(value.find("https://"), std::string::npos) << it->str();
    ++hrefs;
  }
  EXPECT_GT(hrefs, 0u) << "the page links its parts together";
  for (const char* tag : {"<link", "<img", "<iframe", "<object", "<embed", "<base", "<video", "<audio", "<source"})
    EXPECT_EQ(page.find(tag), std::string::npos) << tag;
  const auto style_begin = page.find("<style>"), style_end = page.find("</style>");
  ASSERT_NE(style_begin, std::string::npos);
  const auto style = page.substr(style_begin, style_end - style_begin);
  EXPECT_EQ(style.find("url("), std::string::npos);
  EXPECT_EQ(style.find("@import"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  std::size_t scripts = 0;
  for (std::size_t p = 0; (p = page.find("<script", p)) != std::string::npos; ++p) ++scripts;
  EXPECT_EQ(scripts, 1u) << "only the page's own inline script";
  EXPECT_NE(page.find("<script>"), std::string::npos) << "and it has no src";
}

TEST(Html, TheBrokenMachinesPageNamesTheBreakAndFetchesNothing) {
  auto s = with_baked_libcuda(h200_node("gpu-042", 42));
  const auto rep = report::build(s, kb::builtin());
  ASSERT_FALSE(rep.verdict.healthy);
  ASSERT_EQ(rep.verdict.break_finding, "driver-version-mismatch");
  const auto page = render::html(rep, options());
  ASSERT_TRUE(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">")) << page.substr(0, 200);
  EXPECT_TRUE(page.ends_with("</html>\n"));
  const rules::Finding* brk = nullptr;
  for (const auto& f : rep.findings)
    if (f.id == rep.verdict.break_finding && !brk) brk = &f;
  ASSERT_NE(brk, nullptr);
  // The verdict names the break and links to it; the finding is open, with its fix commands.
  const auto verdict = page.substr(page.find("<section class=\"verdict broken\" id=\"verdict\">"));
  EXPECT_NE(verdict.find("<h2>✗ Broken at L1 driver</h2>"), std::string::npos) << verdict.substr(0, 600);
  EXPECT_NE(verdict.find(text_escaped(rep.verdict.summary)), std::string::npos);
  EXPECT_NE(verdict.find("\">" + text_escaped(brk->title) + "</a> <code class=\"id\">driver-version-mismatch</code>"),
            std::string::npos)
      << verdict.substr(0, 600);
  const auto at = page.find("<code class=\"id\">driver-version-mismatch</code> <span class=\"badge break\">");
  ASSERT_NE(at, std::string::npos);
  const auto opened = page.substr(page.rfind("<details", at), 80);
  EXPECT_NE(opened.find("finding error problem"), std::string::npos) << opened;
  EXPECT_NE(opened.find(" open>"), std::string::npos) << opened;
  EXPECT_NE(page.find("<p class=\"fix\"><strong>Fix:</strong> " + render::html_page::h(brk->fix.text) + "</p>"),
            std::string::npos);
  // Every fix command in a <pre><code>, each its own line, in the finding's order.
  std::size_t blocks = 0;
  for (const auto& f : rep.findings) {
    if (f.fix.commands.empty()) continue;
    std::string block = "<pre class=\"commands\"><code>";
    for (std::size_t i = 0; i < f.fix.commands.size(); ++i)
      block += (i ? "\n" : "") + render::html_page::h(f.fix.commands[i]);
    EXPECT_NE(page.find(block + "</code></pre>"), std::string::npos) << f.id << ": " << block;
    ++blocks;
  }
  EXPECT_GT(blocks, 0u);
  EXPECT_NE(page.find("<h2>L1 driver <span class=\"badge break\">break point</span></h2>"), std::string::npos);
  EXPECT_NE(page.find("Before posting it in public"), std::string::npos);
  EXPECT_NE(page.find("Generated 2026-12-02 21:10 UTC by <code>cudoctor check --format html</code>"),
            std::string::npos);
  expect_fetches_nothing(page);
  auto redacted = options();
  redacted.redacted = true;
  EXPECT_EQ(render::html(rep, redacted).find("Before posting it in public"), std::string::npos);
}

TEST(Html, WhatTheMachineWroteIsEscaped) {
  auto s = with_baked_libcuda(h200_node("gpu-<b>7</b>", 7));
  for (auto& g : s.gpus)
    if (g.nvml) g.nvml->name = "<script>alert(1)</script> \"H200\" & 'x'\x1b[31m";
  const auto page = page_of(s);
  EXPECT_EQ(page.find("<script>alert(1)"), std::string::npos);
  EXPECT_EQ(page.find("<b>7"), std::string::npos);
  EXPECT_EQ(page.find('\x1b'), std::string::npos) << "a control character is shown, not sent";
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt; &quot;H200&quot; &amp; &#39;x&#39;\\x1b[31m</p>"),
            std::string::npos)
      << "the GPUs line";
  EXPECT_NE(page.find("<strong>gpu-&lt;b&gt;7&lt;/b&gt;</strong>"), std::string::npos);
  expect_fetches_nothing(page);

  // In a fleet: a hostile host name and a file that is no report.
  fleet::Aggregate agg;
  for (int i = 0; i < 3; ++i) {
    auto node = h200_node(i == 1 ? "<img src=x onerror=alert(1)>" : fmt::format("gpu-{:03}", i), i);
    if (i == 2) node = with_baked_libcuda(std::move(node));
    auto d = fleet::read_report(report_text(std::move(node)), fmt::format("r/{}.json", i));
    ASSERT_TRUE(d.ok());
    agg.add(std::move(d).value());
  }
  agg.skip("r/<odd>.json", "not JSON: \"<\" at 1");
  const auto fleet_page = render::fleet_html(std::move(agg).finish(), options());
  EXPECT_EQ(fleet_page.find("<img"), std::string::npos);
  EXPECT_NE(fleet_page.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(fleet_page.find("<code>r/&lt;odd&gt;.json</code>: not JSON: &quot;&lt;&quot; at 1"), std::string::npos);
  EXPECT_NE(fleet_page.find("<div class=\"count\" id=\"count-reports\"><b>3</b>reports</div>"), std::string::npos);
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(fleet_page.find(fmt::format("<details class=\"node{}\" id=\"n{}\">", n == 3 ? " broken" : "", n)),
              std::string::npos)
        << "every node's findings a click away";
  expect_fetches_nothing(fleet_page);
}

// A page in Chromium: the DOM after the script ran, and a screenshot.
class ScenarioHtml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(k_chromium)) GTEST_SKIP() << k_chromium << " is not installed (scripts/install-deps.sh --test)";
  }
  std::string write(const std::string& name, const std::string& page) {
    m_work.file("/" + name, page);
    return m_work.host("/" + name).string();
  }
  // Chromium headless with a profile of its own and no way out: names resolve to nothing and
  // the proxy is a closed port, so a page that tried to fetch would show it broken.
  std::string chromium(const std::string& what, const std::string& url) {
    return shell_output(
        fmt::format("timeout 60 {} --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir={} "
                    "--host-resolver-rules='MAP * ~NOTFOUND' --proxy-server=127.0.0.1:9 {} 'file://{}' 2>/dev/null",
                    k_chromium, m_work.host("/profile").string(), what, url));
  }
  // The screenshot, kept for a person to look at; its path is printed.
  void screenshot(const std::string& page, const std::string& name) {
    const auto png = m_work.host("/" + name).string();
    chromium("--screenshot=" + png + " --window-size=1200,1600", page);
    ASSERT_TRUE(fs::exists(png)) << "Chromium wrote no screenshot of " << page;
    EXPECT_GT(fs::file_size(png), 10u * 1024) << png;
    // Beside vendor/ is the build directory.
    const auto keep = fs::path(CUDOCTOR_VENDOR_DIR).parent_path() / "html-screenshots";
    fs::create_directories(keep);
    fs::copy_file(png, keep / name, fs::copy_options::overwrite_existing);
    std::printf("screenshot: %s\n", (keep / name).c_str());
  }
  FixtureRoot m_work;
};

TEST_F(ScenarioHtml, AMachinesPageShowsTheVerdictTheBreakAndItsFix) {
  FixtureRoot root;
  build_secure_boot_blocks_dkms(root);
  const auto r = run_cudoctor({"check", "--format", "html", "--root", root.path().string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(run_cudoctor({"check", "--json", "--root", root.path().string()}).out);
  const auto& verdict = j["verdict"];
  nlohmann::json brk;
  for (const auto& f : j["findings"])
    if (f["id"] == verdict["break_finding"] && brk.is_null()) brk = f;
  ASSERT_FALSE(brk.is_null()) << verdict;
  ASSERT_FALSE(brk["fix"]["commands"].empty()) << brk;

  const auto page = write("check.html", r.out);
  const auto dom = chromium("--dump-dom", page);
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "Chromium gave no DOM: " << dom.substr(0, 400);
  EXPECT_NE(dom.find("<div class=\"tools\" id=\"tools\"><button"), std::string::npos)
      << "the script ran: its tool bar is shown";
  const auto seen = visible_text(dom);
  EXPECT_NE(seen.find("✗ Broken at L1 driver"), std::string::npos) << seen.substr(0, 2000);
  EXPECT_NE(seen.find(verdict["summary"].get<std::string>()), std::string::npos) << seen.substr(0, 2000);
  EXPECT_NE(seen.find("Break: " + brk["title"].get<std::string>()), std::string::npos) << seen.substr(0, 2000);
  EXPECT_EQ(brk["title"], "Secure Boot is on and the nvidia module is not loaded");
  for (const auto& c : brk["fix"]["commands"]) {
    EXPECT_NE(seen.find(c.get<std::string>() + "\n"), std::string::npos) << "a line of its own: " << c;
    EXPECT_TRUE(bash_parses(c.get<std::string>())) << c;
  }
  // The break's finding is open; a finding that is no problem is a click away, and a link to it opens it.
  const auto at =
      dom.find("<code class=\"id\">" + brk["id"].get<std::string>() + "</code> <span class=\"badge break\">");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(dom.substr(dom.rfind("<details", at), 90).find("open=\"\""), std::string::npos);
  const std::regex closed(R"re(<details class="finding (ok|info)" id="(f\d+)">)re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, closed)) << "a finding that is no problem starts closed";
  const auto linked = chromium("--dump-dom", page + "#" + m[2].str());
  EXPECT_NE(linked.find(fmt::format("<details class=\"finding {}\" id=\"{}\" open=\"\">", m[1].str(), m[2].str())),
            std::string::npos)
      << "a link into the page opens what it points at";
  screenshot(page, "check.png");

  // --redact: the host name is gone from the page, and what stands in its place is text a
  // person reads, not an element the browser swallows.
  const std::string host = j["host"]["hostname"];
  ASSERT_FALSE(host.empty());
  ASSERT_NE(seen.find(host), std::string::npos) << "the page names the host unredacted";
  const auto red = run_cudoctor({"check", "--format", "html", "--redact", "--root", root.path().string()});
  EXPECT_EQ(red.out.find(host), std::string::npos);
  const auto red_seen = visible_text(chromium("--dump-dom", write("redacted.html", red.out)));
  EXPECT_EQ(red_seen.find(host), std::string::npos);
  EXPECT_NE(red_seen.find("<host>"), std::string::npos) << red_seen.substr(0, 2000);
  EXPECT_NE(red_seen.find("✗ Broken at L1 driver"), std::string::npos) << "the page still works";
}

TEST_F(ScenarioHtml, AFleetsPageShowsTheCountsTheBrokenNodeAndWhy) {
  FixtureRoot dir;
  for (int i = 0; i < 20; ++i) {
    auto s = h200_node(fmt::format("gpu-{:03}", i), i);
    if (i == 7) s = with_baked_libcuda(std::move(s));
    dir.file(fmt::format("/reports/gpu-{:03}.json", i), report_text(std::move(s)));
  }
  dir.file("/reports/gpu-020.json", "{\"schema\": ");  // the node died while writing
  const auto reports = dir.host("/reports").string();
  const auto r = run_cudoctor({"fleet", reports, "--format", "html"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(run_cudoctor({"fleet", reports, "--json"}).out);
  nlohmann::json broken;
  std::size_t index = 0;
  for (std::size_t i = 0; i < j["nodes"].size(); ++i)
    if (!j["nodes"][i]["healthy"].get<bool>()) broken = j["nodes"][index = i];
  ASSERT_EQ(broken["name"], "gpu-007") << j["nodes"];

  const auto page = write("fleet.html", r.out);
  const auto dom = chromium("--dump-dom", page);
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "Chromium gave no DOM: " << dom.substr(0, 400);
  const auto seen = visible_text(dom);
  EXPECT_NE(seen.find("20 reports: 19 healthy, 1 broken, in 2 configurations; 1 file skipped"), std::string::npos)
      << seen.substr(0, 2000);
  EXPECT_NE(dom.find("id=\"count-reports\"><b>20</b>reports"), std::string::npos);
  EXPECT_NE(dom.find("id=\"count-broken\"><b>1</b>broken"), std::string::npos);
  EXPECT_NE(seen.find("20 of 20 nodes shown"), std::string::npos) << "the script counted the nodes";
  // The broken table: the node, its break, the cause and the first fix (a dash: this break's fix is in words).
  const auto fix = broken["fix_command"].get<std::string>();
  const auto row = dom.find("<tr class=\"broken-node\">");
  ASSERT_NE(row, std::string::npos);
  const auto line = visible_text(dom.substr(row, dom.find("</tr>", row) - row));
  EXPECT_EQ(line, fmt::format("gpu-007L1driver-version-mismatch{}{}", broken["cause"].get<std::string>(),
                              fix.empty() ? "—" : fix));
  EXPECT_TRUE(broken["cause"].get<std::string>().starts_with("Kernel module 580.159.04 but user-space driver"))
      << broken;
  EXPECT_NE(seen.find("gpu-020.json"), std::string::npos) << "the skipped file by name";
  // Its findings a click away: the link in the table opens its <details>.
  const auto anchor = fmt::format("n{}", index + 1);
  EXPECT_NE(dom.find(fmt::format("<a href=\"#{}\">gpu-007</a>", anchor)), std::string::npos);
  EXPECT_NE(dom.find(fmt::format("<details class=\"node broken\" id=\"{}\">", anchor)), std::string::npos);
  const auto linked = chromium("--dump-dom", page + "#" + anchor);
  const auto opened = linked.find(fmt::format("<details class=\"node broken\" id=\"{}\" open=\"\">", anchor));
  ASSERT_NE(opened, std::string::npos) << "following the link opens the node";
  const auto node = visible_text(linked.substr(opened, linked.find("</details>", opened) - opened));
  EXPECT_NE(node.find("Problems: driver-version-mismatch"), std::string::npos) << node;
  if (fix.empty())
    EXPECT_EQ(node.find("First fix"), std::string::npos) << node;
  else
    EXPECT_NE(node.find("First fix:\n" + fix + "\n"), std::string::npos) << node;
  screenshot(page, "fleet.png");
}

}  // namespace
}  // namespace cudoctor::testing
