#include <gtest/gtest.h>

#include "cudoctor/render/html.hpp"
#include "cudoctor/render/render.hpp"

namespace cudoctor::render {
namespace {

Secrets alice() {
  snapshot::HostFacts h;
  h.user = "root";
  h.hostname = "gpu-node-17";
  h.private_names = {"alice"};
  h.private_homes = {"/srv/u/alice", "/home/bob"};
  h.host_names = {"gpu-node-17", "gpu-node-17.cluster.example.org"};
  return secrets_of(h);
}

TEST(Redact, NamesOnPunctuationAndPathBoundaries) {
  const auto s = alice();
  EXPECT_EQ(redact("/opt/venvs/train-alice/bin/python3", s), "/opt/venvs/train-<user>/bin/python3");
  EXPECT_EQ(redact("/scratch/alice-env alice.cfg alice_x (alice) 'alice'", s),
            "/scratch/<user>-env <user>.cfg <user>_x (<user>) '<user>'");
  EXPECT_EQ(redact("malice alicent Alice2 alice1", s), "malice alicent Alice2 alice1") << "not inside longer words";
  EXPECT_EQ(redact("\"user\": \"alice\"", s), "\"user\": \"<user>\"");
}

TEST(Redact, HomesWhereAPathComponentEnds) {
  const auto s = alice();
  EXPECT_EQ(redact("/srv/u/alice/.conda/envs/x", s), "<home>/.conda/envs/x");
  EXPECT_EQ(redact("PATH=/home/bob/bin:/usr/bin", s), "PATH=<home>/bin:/usr/bin");
  EXPECT_EQ(redact("/home/bobby/bin /home/bob.old", s), "/home/bobby/bin /home/bob.old") << "another directory";
  EXPECT_EQ(redact("/tmp/root-x/home/bob/lib", s), "/tmp/root-x<home>/lib") << "inside a --root prefix too";
}

TEST(Redact, HostAsAWholeTokenAnyCase) {
  const auto s = alice();
  EXPECT_EQ(redact("/srv/gpu-node-17.local/cuda-12.4", s), "/srv/gpu-node-17.local/cuda-12.4") << "in a path";
  EXPECT_EQ(redact("host gpu-node-17. alice@gpu-node-17 (gpu-node-17)", s), "host <host>. <user>@<host> (<host>)");
  EXPECT_EQ(redact("on gpu-node-17.cluster.example.org today", s), "on <host> today") << "the FQDN as one";
  EXPECT_EQ(redact("GPU-NODE-17: up", s), "<host>: up");
  EXPECT_EQ(redact("gpu-node-170 xgpu-node-17", s), "gpu-node-170 xgpu-node-17");
}

// In a page, placeholders are text, not elements; a secret is matched as the page escapes it;
// a character reference is never cut, whatever the user is called.
TEST(Redact, InHtmlThePlaceholdersAreTextAndReferencesStayWhole) {
  snapshot::HostFacts h;
  h.user = "amp";
  h.hostname = "gpu-node-17";
  h.private_names = {"amp", "o'neil", "lt"};
  h.private_homes = {"/home/o'neil"};
  const auto s = secrets_of(h);
  EXPECT_EQ(redact_html("<td>gpu-node-17</td><td>/home/o&#39;neil/venv</td>", s),
            "<td>&lt;host&gt;</td><td>&lt;home&gt;/venv</td>");
  EXPECT_EQ(redact_html("<p>amp: A &amp; B &lt;x&gt; o&#39;neil &#39;amp&#39;</p>", s),
            "<p>&lt;user&gt;: A &amp; B &lt;x&gt; &lt;user&gt; &#39;&lt;user&gt;&#39;</p>");
  EXPECT_EQ(redact("gpu-node-17", s), "<host>") << "text keeps its own placeholders";
}

// The page's own markup is not the report's text: a user called "code" or a host called "tools"
// leaves the elements, ids, style sheet and script alone, and is replaced in the text around them.
TEST(Redact, InHtmlTheMarkupStyleAndScriptAreNeverTouched) {
  snapshot::HostFacts h;
  h.hostname = "tools";
  h.private_names = {"code"};
  const auto s = secrets_of(h);
  EXPECT_EQ(redact_html("<div class=\"tools\" id=\"tools\"><code>code</code> on tools</div>", s),
            "<div class=\"tools\" id=\"tools\"><code>&lt;user&gt;</code> on &lt;host&gt;</div>");
  EXPECT_EQ(redact_html("<style>.tools code{x:1}</style><script>getElementById('tools')</script><!-- code -->x", s),
            "<style>.tools code{x:1}</style><script>getElementById('tools')</script><!-- code -->x");
}

// A home with a quote in it, inside JSON, is spelt with a backslash: that spelling goes too.
TEST(Redact, SecretsAreMatchedAsJsonSpellsThem) {
  snapshot::HostFacts h;
  h.private_homes = {"/home/o\"neil"};
  const auto s = secrets_of(h);
  EXPECT_EQ(redact("{\"home\": \"/home/o\\\"neil/venv\"} /home/o\"neil/x", s), "{\"home\": \"<home>/venv\"} <home>/x");
  EXPECT_EQ(redact_html("<pre>\"/home/o\\&quot;neil/v\"</pre>", s), "<pre>\"&lt;home&gt;/v\"</pre>");
}

TEST(Redact, RootsHomeIsAHomeButRootAndOneLetterNamesAreWords) {
  snapshot::HostFacts h;
  h.user = "root";
  h.private_names = {"root", "a"};
  h.private_homes = {"/root", "/"};
  const auto s = secrets_of(h);
  EXPECT_TRUE(s.names.empty());
  EXPECT_EQ(redact("a root --root /root/.pyenv/versions/3.11.7 /rooted", s),
            "a root --root <home>/.pyenv/versions/3.11.7 /rooted");
}

TEST(Redact, AHostNamedLikeADirectoryLeavesPathsAlone) {
  snapshot::HostFacts h;
  h.hostname = "local";
  const auto s = secrets_of(h);
  EXPECT_EQ(redact("CUDA 13.0.88 at /usr/local/cuda-13.0 · local · lib/ local:", s),
            "CUDA 13.0.88 at /usr/local/cuda-13.0 · <host> · lib/ <host>:");
}

TEST(Redact, PlaceholdersAreNotMatchedAgain) {
  snapshot::HostFacts h;
  h.private_names = {"user", "home"};
  h.hostname = "host";
  EXPECT_EQ(redact("user home host", secrets_of(h)), "<user> <user> <host>");
}

}  // namespace
}  // namespace cudoctor::render
