// The loader's rules, each pinned on small libraries built here with the system compiler,
// and each answer checked against glibc's own ld.so (--list) on the same files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cudoctor/elf/elf_file.hpp"
#include "cudoctor/util/strings.hpp"
#include "fixture_root.hpp"
#include "scenario.hpp"

namespace cudoctor::testing {
namespace {

namespace fs = std::filesystem;

class Build {
 public:
  Build() : m_dir(m_root.path()) {}
  const fs::path& dir() const { return m_dir; }
  std::string p(const std::string& rel) const { return (m_dir / rel).string(); }

  // Compiles one C source line into a shared library or executable with extra flags.
  void cc(const std::string& out, const std::string& code, const std::string& flags) {
    fs::create_directories(fs::path(p(out)).parent_path());
    const auto src = p(out + ".c");
    std::ofstream(src) << code << "\n";
    const auto cmd = "cc -o '" + p(out) + "' '" + src + "' " + flags + " -L'" + m_dir.string() + "/lib' 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    fs::remove(src);
  }
  void lib(const std::string& out, const std::string& soname, const std::string& code, const std::string& flags = "") {
    cc(out, code, "-shared -fPIC -Wl,-soname," + soname + " " + flags);
  }

 private:
  FixtureRoot m_root;
  fs::path m_dir;
};

// ld.so --list: name -> path ("not found"), for libraries it prints with "=>".
std::map<std::string, std::string> ldso(const std::string& file, const std::string& llp) {
  // As ldd runs it: LD_TRACE_LOADED_OBJECTS lists what cannot be found instead of failing.
  const auto cmd = std::string("env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 ") +
                   (llp.empty() ? "" : "LD_LIBRARY_PATH='" + llp + "' ") + "/lib64/ld-linux-x86-64.so.2 '" + file +
                   "' 2>&1";
  std::map<std::string, std::string> out;
  FILE* p = ::popen(cmd.c_str(), "r");
  char line[4096];
  const std::regex re(R"(^\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\)))");
  while (p && std::fgets(line, sizeof line, p)) {
    std::cmatch m;
    if (std::regex_search(line, m, re)) out[m[1]] = m[2] == "not found" ? "not found" : std::string(m[3]);
  }
  if (p) ::pclose(p);
  return out;
}

struct Ours {
  std::map<std::string, std::string> paths;  // name -> path or "not found"
  std::map<std::string, std::string> rules;  // name -> rule
  nlohmann::json json;
  CliResult run;
};

// One ldd --json tree's libraries as ld.so --list prints them (not the file itself or the
// interpreter): name -> path or "not found", with each one's rule beside it in rules.
std::map<std::string, std::string> libraries_of(const nlohmann::json& tree,
                                                std::map<std::string, std::string>* rules = nullptr) {
  std::map<std::string, std::string> paths;
  for (std::size_t i = 1; i < tree["objects"].size(); ++i) {
    const auto& obj = tree["objects"][i];
    if (obj["rule"] == "interpreter") continue;
    paths[obj["name"]] = obj["found"].get<bool>() ? obj["path"].get<std::string>() : "not found";
    if (rules) (*rules)[obj["name"]] = obj["rule"];
  }
  return paths;
}

Ours ours(const std::string& file, const std::string& llp) {
  Ours o;
  o.run = run_cudoctor({"ldd", "--json", "--ld-library-path", llp, file});
  o.json = nlohmann::json::parse(o.run.out)[0];
  o.paths = libraries_of(o.json, &o.rules);
  return o;
}

// Our answer must be ld.so's; returns ours for the rule assertions.
Ours agree(const std::string& file, const std::string& llp = "") {
  auto o = ours(file, llp);
  EXPECT_EQ(o.paths, ldso(file, llp)) << "cudoctor ldd and ld.so --list disagree on " << file;
  return o;
}

constexpr const char* k_fn = "int f(void) { return 1; }";

// ORs DF_1_NODEFLIB (0x800) into a 64-bit little-endian file's DT_FLAGS_1 entry.
void set_nodeflib(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto elf = elf::parse_elf(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  ASSERT_TRUE(elf) << elf.error();
  for (const auto& s : elf->segments) {
    if (s.type != 2) continue;  // PT_DYNAMIC
    for (std::uint64_t o = s.offset; o + 16 <= s.offset + s.filesz; o += 16) {
      std::uint64_t tag = 0, val = 0;
      std::memcpy(&tag, bytes.data() + o, 8);
      std::memcpy(&val, bytes.data() + o + 8, 8);
      if (tag != 0x6ffffffb) continue;
      val |= 0x800;
      f.seekp(static_cast<std::streamoff>(o + 8));
      f.write(reinterpret_cast<const char*>(&val), 8);
      return;
    }
  }
  FAIL() << "no DT_FLAGS_1 in " << path;
}

TEST(ScenarioLd, RpathIsInheritedRunpathIsNot) {
  Build b;
  b.lib("deps/libb.so", "libb.so", k_fn);
  b.lib("lib/liba.so", "liba.so", "int f(void); int g(void) { return f(); }", "-L" + b.p("deps") + " -lb");
  // An executable with DT_RPATH naming both directories: liba's own search for libb inherits it.
  b.cc("bin/rpath", "int g(void); int main(void) { return g(); }",
       "-la -Wl,--disable-new-dtags,-rpath," + b.p("lib") + ":" + b.p("deps"));
  auto o = agree(b.p("bin/rpath"));
  EXPECT_EQ(o.rules["libb.so"], "DT_RPATH");
  EXPECT_EQ(o.paths["libb.so"], b.p("deps/libb.so"));
  // The same with DT_RUNPATH: it applies to the executable's own needs only.
  b.cc("bin/runpath", "int g(void); int main(void) { return g(); }",
       "-la -Wl,--enable-new-dtags,-rpath," + b.p("lib") + ":" + b.p("deps"));
  o = agree(b.p("bin/runpath"));
  EXPECT_EQ(o.rules["liba.so"], "DT_RUNPATH");
  EXPECT_EQ(o.paths["libb.so"], "not found");
  EXPECT_EQ(o.run.exit_code, 1);
  // --why says where it looked.
  const auto why = run_cudoctor({"ldd", "--why", "libb.so", "--ld-library-path", "", b.p("bin/runpath")});
  EXPECT_TRUE(contains(why.out, "not found"));
  EXPECT_TRUE(contains(why.out, "needed by: " + b.p("lib/liba.so")));
}

TEST(ScenarioLd, SearchOrderRpathThenLdLibraryPathThenRunpath) {
  Build b;
  for (const char* d : {"r", "env", "run"}) b.lib(std::string(d) + "/libx.so", "libx.so", k_fn);
  b.cc("lib/liba.so", "", "-shared -fPIC");
  b.cc("bin/rpath", "int f(void); int main(void) { return f(); }",
       "-L" + b.p("r") + " -lx -Wl,--disable-new-dtags,-rpath," + b.p("r"));
  b.cc("bin/runpath", "int f(void); int main(void) { return f(); }",
       "-L" + b.p("run") + " -lx -Wl,--enable-new-dtags,-rpath," + b.p("run"));
  EXPECT_EQ(agree(b.p("bin/rpath"), b.p("env")).rules["libx.so"], "DT_RPATH");
  EXPECT_EQ(agree(b.p("bin/runpath"), b.p("env")).rules["libx.so"], "LD_LIBRARY_PATH");
  EXPECT_EQ(agree(b.p("bin/runpath")).rules["libx.so"], "DT_RUNPATH");
}

TEST(ScenarioLd, OriginAndNodeflib) {
  Build b;
  b.lib("app/lib/libo.so", "libo.so", k_fn);
  b.cc("app/bin/tool", "int f(void); int main(void) { return f(); }",
       "-L" + b.p("app/lib") + " -lo -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib'");
  const auto o = agree(b.p("app/bin/tool"));
  EXPECT_EQ(o.paths.at("libo.so"), b.p("app/bin/../lib/libo.so")) << "ld.so keeps the '..' of $ORIGIN/../lib";
  // DF_1_NODEFLIB (shared objects only): libz is only in the system directories, which the
  // flag takes out of the search for the library's own needs.
  // GNU ld ignores -z nodeflib on x86-64, so the flag is set in the built file's DT_FLAGS_1
  // (present thanks to -z now), where lld or another linker would have put it.
  b.lib("lib/libn.so", "libn.so", k_fn, "-Wl,--no-as-needed -lz -Wl,-z,now");
  set_nodeflib(b.p("lib/libn.so"));
  b.cc("bin/nodeflib", "int f(void); int main(void) { return f(); }",
       "-L" + b.p("lib") + " -ln -Wl,-rpath," + b.p("lib"));
  const auto n = agree(b.p("bin/nodeflib"));
  EXPECT_EQ(n.paths.at("libz.so.1"), "not found");
  bool said = false;
  for (const auto& obj : n.json["objects"]) said = said || contains(obj["detail"], "DF_1_NODEFLIB");
  EXPECT_TRUE(said) << n.json.dump(1);
}

TEST(ScenarioLd, LibAndPlatformTokens) {
  Build b;
  // Debian's glibc expands $LIB to lib/x86_64-linux-gnu; $PLATFORM to what glibc makes of the
  // CPU: "haswell" or "xeon_phi" on Intel CPUs with those features, else x86_64 (AT_PLATFORM).
  b.lib("lib/x86_64-linux-gnu/libq.so", "libq.so", k_fn);
  for (const char* platform : {"x86_64", "haswell", "xeon_phi"})
    b.lib(std::string(platform) + "/libq.so", "libq.so", k_fn);
  b.cc("bin/q", "int f(void); int main(void) { return f(); }",
       "-L" + b.p("x86_64") + " -lq -Wl,-rpath,'" + b.dir().string() + "/$LIB:" + b.dir().string() + "/$PLATFORM'");
  EXPECT_EQ(agree(b.p("bin/q")).paths.at("libq.so"), b.p("lib/x86_64-linux-gnu/libq.so"));
  fs::remove(b.p("lib/x86_64-linux-gnu/libq.so"));
  const auto o = agree(b.p("bin/q"));
  EXPECT_NE(o.paths.at("libq.so"), "not found") << "one of the $PLATFORM directories";
}

// Runs the enclosed code from another current directory (ld.so and cudoctor inherit it).
class InDirectory {
 public:
  explicit InDirectory(const fs::path& dir) : m_old(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(m_old); }

 private:
  fs::path m_old;
};

// ld.so --list's raw output, run from the current directory.
std::string ldso_text(const std::string& file, const std::string& llp) {
  return shell_output("env -u LD_LIBRARY_PATH LD_TRACE_LOADED_OBJECTS=1 " +
                      (llp.empty() ? std::string() : "LD_LIBRARY_PATH='" + llp + "' ") +
                      "/lib64/ld-linux-x86-64.so.2 '" + file + "' 2>&1");
}

TEST(ScenarioLd, RelativePathsAreOpenedFromTheCurrentDirectory) {
  Build b;
  // A library linked by its path and without a soname: its DT_NEEDED is "sub/libx.so". One
  // whose soname is "$LIB/libw.so": "lib/x86_64-linux-gnu/libw.so" once expanded.
  b.cc("sub/libx.so", k_fn, "-shared -fPIC");
  b.lib("lib/x86_64-linux-gnu/libw.so", "\\$LIB/libw.so", "int g(void) { return 2; }");  // escaped for the shell
  b.lib("d/libq.so", "libq.so", "int h(void) { return 3; }");
  {
    InDirectory here(b.dir());
    b.cc("bin/rel", "int f(void); int g(void); int main(void) { return f() + g(); }",
         "sub/libx.so lib/x86_64-linux-gnu/libw.so");
  }
  b.cc("bin/q", "int h(void); int main(void) { return h(); }", "-L" + b.p("d") + " -lq");
  const auto ours_from = [&](const fs::path& cwd, const std::string& file, const std::string& llp) {
    InDirectory here(cwd);
    return std::make_pair(ldso_text(file, llp), ours(file, llp));
  };
  // From the tree's top both relative names open; ld.so prints such a name without "=>".
  auto [ldso, o] = ours_from(b.dir(), b.p("bin/rel"), "");
  EXPECT_TRUE(contains(ldso, "\tsub/libx.so (0x")) << ldso;
  EXPECT_TRUE(contains(ldso, "\tlib/x86_64-linux-gnu/libw.so (0x")) << "ld.so prints the name expanded: " << ldso;
  EXPECT_EQ(o.paths["sub/libx.so"], b.p("sub/libx.so"));
  EXPECT_EQ(o.rules["sub/libx.so"], "path");
  EXPECT_EQ(o.paths["$LIB/libw.so"], b.p("lib/x86_64-linux-gnu/libw.so"));
  EXPECT_EQ(o.run.exit_code, 0) << o.run.out << o.run.err;
  // From bin/ neither does, for ld.so and for cudoctor: not from the directory of the program.
  std::tie(ldso, o) = ours_from(b.dir() / "bin", b.p("bin/rel"), "");
  EXPECT_TRUE(contains(ldso, "sub/libx.so => not found")) << ldso;
  EXPECT_TRUE(contains(ldso, "\tlib/x86_64-linux-gnu/libw.so => not found")) << ldso;
  EXPECT_EQ(o.paths["sub/libx.so"], "not found");
  EXPECT_EQ(o.paths["$LIB/libw.so"], "not found");
  EXPECT_EQ(o.run.exit_code, 1);
  // An empty LD_LIBRARY_PATH entry ("/nonexistent:") is the current directory.
  std::tie(ldso, o) = ours_from(b.dir() / "d", b.p("bin/q"), "/nonexistent:");
  EXPECT_TRUE(contains(ldso, "\tlibq.so (0x")) << ldso;
  EXPECT_EQ(o.paths["libq.so"], b.p("d/libq.so"));
  EXPECT_EQ(o.rules["libq.so"], "LD_LIBRARY_PATH");
  std::tie(ldso, o) = ours_from(b.dir(), b.p("bin/q"), "/nonexistent:");
  EXPECT_TRUE(contains(ldso, "libq.so => not found")) << ldso;
  EXPECT_EQ(o.paths["libq.so"], "not found");
}

TEST(ScenarioLd, GlibcHwcapsSubdirectoryWins) {
  Build b;
  b.lib("d/libh.so", "libh.so", k_fn);
  b.lib("d/glibc-hwcaps/x86-64-v2/libh.so", "libh.so", k_fn);
  b.cc("bin/h", "int f(void); int main(void) { return f(); }", "-L" + b.p("d") + " -lh");
  const auto o = agree(b.p("bin/h"), b.p("d"));
  std::ifstream cpu("/proc/cpuinfo");
  const std::string info((std::istreambuf_iterator<char>(cpu)), std::istreambuf_iterator<char>());
  if (contains(info, " sse4_2") && contains(info, " popcnt") && contains(info, " cx16")) {
    EXPECT_EQ(o.paths.at("libh.so"), b.p("d/glibc-hwcaps/x86-64-v2/libh.so"));
  }
}

TEST(ScenarioLd, MissingLibraryAndMissingSymbolVersion) {
  Build b;
  std::ofstream(b.p("v2.map")) << "VERS_1 { global: f; local: *; };\nVERS_2 { global: g; } VERS_1;\n";
  std::ofstream(b.p("v1.map")) << "VERS_1 { global: f; local: *; };\n";
  b.lib("lib/libv.so", "libv.so", "int f(void) { return 1; } int g(void) { return 2; }",
        "-Wl,--version-script=" + b.p("v2.map"));
  b.cc("bin/v", "int g(void); int main(void) { return g(); }", "-lv -Wl,--enable-new-dtags,-rpath," + b.p("lib"));
  // The library is replaced by an older build that lacks VERS_2.
  b.lib("lib/libv.so", "libv.so", "int f(void) { return 1; }", "-Wl,--version-script=" + b.p("v1.map"));
  const auto o = agree(b.p("bin/v"));
  EXPECT_EQ(o.run.exit_code, 1);
  EXPECT_EQ(o.json["objects"][0]["missing_versions"][0], "VERS_2 (in " + b.p("lib/libv.so") + ")");
  const auto text = run_cudoctor({"ldd", "--ld-library-path", "", b.p("bin/v"), "--color", "never"});
  EXPECT_TRUE(contains(text.out, "version VERS_2 (in " + b.p("lib/libv.so") + ") not found"));
  // A library nowhere to be found.
  b.cc("bin/missing", "int main(void) { return 0; }",
       "-Wl,--no-as-needed -L" + b.p("lib") + " -lv -Wl,--allow-shlib-undefined");
  fs::remove(b.p("lib/libv.so"));
  const auto m = agree(b.p("bin/missing"));
  EXPECT_EQ(m.paths.at("libv.so"), "not found");
}

TEST(ScenarioLd, WrongClassIsPassedOver) {
  Build b;
  if (std::system("echo 'int f(void){return 0;}' | cc -m32 -shared -fPIC -x c -o /dev/null - 2>/dev/null") != 0)
    GTEST_SKIP() << "no 32-bit compiler support (gcc-multilib)";
  b.cc("d32/libw.so", k_fn, "-m32 -shared -fPIC -Wl,-soname,libw.so");
  b.lib("d64/libw.so", "libw.so", k_fn);
  b.cc("bin/w", "int f(void); int main(void) { return f(); }", "-L" + b.p("d64") + " -lw");
  const auto o = agree(b.p("bin/w"), b.p("d32") + ":" + b.p("d64"));
  EXPECT_EQ(o.paths.at("libw.so"), b.p("d64/libw.so"));
  EXPECT_TRUE(contains(o.json["objects"][2]["rejected"][0]["why"], "wrong ELF class: ELFCLASS32"));
}

// ld.so knows a file by its device and inode: a second name that is a hard link to a library
// already loaded is that library, not a second object.
TEST(ScenarioLd, AHardLinkToALoadedLibraryIsTheSameObject) {
  Build b;
  b.lib("lib/libh.so", "libh.so", k_fn);
  b.lib("lib/libg.so", "libg.so", "int g(void) { return 2; }");
  b.cc("bin/h", "int f(void); int g(void); int main(void) { return f() + g(); }",
       "-Wl,--no-as-needed -lh -lg -Wl,--enable-new-dtags,-rpath," + b.p("lib"));
  fs::remove(b.p("lib/libg.so"));
  fs::create_hard_link(b.p("lib/libh.so"), b.p("lib/libg.so"));
  const auto o = agree(b.p("bin/h"));
  EXPECT_EQ(o.paths.at("libh.so"), b.p("lib/libh.so"));
  EXPECT_EQ(o.paths.count("libg.so"), 0u) << "listed as a second object";
  const auto& root = o.json["objects"][0];
  ASSERT_EQ(root["needs"].size(), 3u) << root.dump();
  EXPECT_EQ(root["needs"][0]["name"], "libh.so");
  EXPECT_EQ(root["needs"][1]["name"], "libg.so");
  EXPECT_EQ(root["needs"][0]["object"], root["needs"][1]["object"]);
}

// A dangling link where a search looks is passed over as ld.so's failing open passes over it,
// whether the directory was listed (many names asked of it) or each name stat-ed (few).
TEST(ScenarioLd, ADanglingLinkIsPassedOverInListedAndUnlistedDirectories) {
  for (const int many : {0, 40}) {
    Build b;
    std::string needs = "-Wl,--no-as-needed";
    std::string decls = "int f(void);";
    std::string sum = "f()";
    for (int i = 0; i < many; ++i) {
      const auto n = "n" + std::to_string(i);
      b.lib("first/lib" + n + ".so", "lib" + n + ".so", "int " + n + "(void) { return 0; }");
      needs += " -l" + n;
      decls += " int " + n + "(void);";
      sum += " + " + n + "()";
    }
    b.lib("second/libd.so", "libd.so", k_fn);
    b.cc("bin/d", decls + " int main(void) { return " + sum + "; }",
         "-L" + b.p("first") + " -L" + b.p("second") + " " + needs + " -ld -Wl,--enable-new-dtags,-rpath," +
             b.p("first") + ":" + b.p("second"));
    fs::create_directories(b.p("first"));
    fs::create_symlink(b.p("gone/libd.so"), b.p("first/libd.so"));
    const auto o = agree(b.p("bin/d"));
    EXPECT_EQ(o.paths.at("libd.so"), b.p("second/libd.so")) << many << " other libraries";
    EXPECT_EQ(o.paths.size(), static_cast<std::size_t>(many) + 2) << o.json.dump();
    for (const auto& obj : o.json["objects"])
      EXPECT_TRUE(obj["name"] != "libd.so" || obj["rejected"].empty()) << obj.dump();
  }
}

// Standard output gets an ldd of many files a part at a time: every tree arrives, each with
// ld.so's answer, and the bytes are those --output writes whole.
TEST(ScenarioLd, OutputWrittenInPartsIsTheWholeOutput) {
  FixtureRoot r;
  const auto expected = ldso("/bin/sh", "");
  for (const std::string format : {"json", "text"}) {
    std::vector<std::string> args = {"ldd", "--format", format};
    const std::size_t files = format == "json" ? 120 : 2500;  // a tree's text is a line or two
    for (std::size_t i = 0; i < files; ++i) args.push_back("/bin/sh");
    const auto streamed = run_cudoctor(args);
    ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
    EXPECT_GT(streamed.out.size(), 1u << 17) << format;  // two parts and more
    if (format == "json") {
      const auto trees = nlohmann::json::parse(streamed.out);
      ASSERT_EQ(trees.size(), files);
      for (const auto& tree : trees) EXPECT_EQ(libraries_of(tree), expected);
    } else {
      const auto ls = util::lines(streamed.out);
      EXPECT_EQ(static_cast<std::size_t>(std::count(ls.begin(), ls.end(), "/bin/sh")), files);
    }
    const auto file = (r.path() / ("ldd." + format)).string();
    args.insert(args.end(), {"--output", file});
    ASSERT_EQ(run_cudoctor(args).exit_code, 0);
    std::ifstream in(file);
    const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(streamed.out, whole) << format;
  }
}

TEST(ScenarioLd, BadInputIsAClearError) {
  FixtureRoot r;
  r.file("/garbage.so", std::string("\x7f"
                                    "ELF\x02\x01\x01",
                                    7) +
                            std::string(9, '\0'));
  r.file("/text.so", "INPUT(libc.so.6)\n");
  for (const char* f : {"/garbage.so", "/text.so", "/nonexistent.so"}) {
    const auto run = run_cudoctor({"ldd", (r.path() / std::string(f).substr(1)).string()});
    EXPECT_EQ(run.exit_code, 2) << f;
    EXPECT_EQ(run.signal, 0) << f;
    EXPECT_FALSE(run.err.empty()) << f;
  }
  const auto a = run_cudoctor({"archs", (r.path() / "text.so").string()});
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_TRUE(contains(a.err, "not an ELF file"));
}

}  // namespace
}  // namespace cudoctor::testing
