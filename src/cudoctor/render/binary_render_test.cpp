#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cudoctor/render/render.hpp"

namespace cudoctor::render {
namespace {

// A program whose interpreter and one DT_NEEDED library are missing; the needed name holds an
// escape sequence and a newline.
ld::Tree missing_interpreter() {
  ld::Tree t;
  ld::Object root;
  root.name = root.path = "/opt/app/bin/app";
  root.found = true;
  root.lookup.rule = ld::Rule::path;
  root.needs = {{"libevil\x1b[2J\n└── libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6", 2}};
  ld::Object interp;
  interp.name = "/lib/ld-musl-x86_64.so.1";
  interp.parent = 0;
  interp.lookup.rule = ld::Rule::interpreter;
  interp.lookup.detail = "PT_INTERP";
  ld::Object lib;
  lib.name = root.needs[0].first;
  lib.parent = 0;
  lib.lookup.rule = ld::Rule::not_found;
  t.objects = {root, interp, lib};
  return t;
}

TEST(LddText, CountsWhatItListsAndEscapesNames) {
  const auto out = ldd_text(missing_interpreter(), {});
  EXPECT_EQ(out,
            "/opt/app/bin/app\n"
            "└── libevil\\x1b[2J\\n└── libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 => not found\n"
            "    (cudoctor ldd /opt/app/bin/app --why libevil\\x1b[2J\\n└── libc.so.6 => "
            "/lib/x86_64-linux-gnu/libc.so.6)\n"
            "/lib/ld-musl-x86_64.so.1 => not found  [interpreter: PT_INTERP]\n"
            "2 libraries not found, 0 symbol versions missing\n");
}

TEST(LddText, WhyEscapesToo) {
  const auto t = missing_interpreter();
  const auto out = ldd_why(t, t.objects[2].name);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out,
            "libevil\\x1b[2J\\n└── libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6\n  not found\n  needed by: "
            "/opt/app/bin/app\n");
}

// ldd --json: every field of every object, as a reader of the JSON contract gets it; the
// document built with nlohmann here is the reference the streaming writer must print.
TEST(LddJson, WritesEveryFieldAsTheDocumentReads) {
  auto t = missing_interpreter();
  t.objects[0].soname = "app\x7f";
  t.objects[0].lookup.searched = {"/opt/app/lib", "/etc/ld.so.cache"};
  t.objects[0].lookup.rejected = {{"/opt/app/lib/libevil.so", "wrong ELF class: ELFCLASS32"}};
  t.objects[2].missing_versions = {"GLIBC_2.38 (in /lib/x86_64-linux-gnu/libc.so.6)"};
  t.objects[1].error = "no such file";
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  ldd_json(w, t);
  ldd_json(w, t);
  w.end_array();
  nlohmann::json objs = nlohmann::json::array();
  for (const auto& o : t.objects) {
    nlohmann::json needs = nlohmann::json::array();
    for (const auto& [name, idx] : o.needs) needs.push_back({{"name", name}, {"object", idx}});
    nlohmann::json rejected = nlohmann::json::array();
    for (const auto& r : o.lookup.rejected) rejected.push_back({{"path", r.path}, {"why", r.why}});
    objs.push_back({{"name", o.name},
                    {"path", o.found ? nlohmann::json(o.path) : nlohmann::json(nullptr)},
                    {"soname", o.soname},
                    {"found", o.found},
                    {"rule", ld::to_string(o.lookup.rule)},
                    {"detail", o.lookup.detail},
                    {"searched", o.lookup.searched},
                    {"rejected", rejected},
                    {"parent", o.parent},
                    {"needs", needs},
                    {"missing_versions", o.missing_versions},
                    {"error", o.error}});
  }
  const nlohmann::json tree = {{"file", "/opt/app/bin/app"}, {"objects", objs}};
  EXPECT_EQ(out + "\n", json_text(nlohmann::json::array({tree, tree})));
  const auto back = nlohmann::json::parse(out);
  EXPECT_EQ(back[1]["objects"][2]["path"], nullptr);
  EXPECT_EQ(back[0]["objects"][0]["rejected"][0]["why"], "wrong ELF class: ELFCLASS32");
  EXPECT_EQ(back[0]["objects"][0]["needs"][0]["object"], 2);
  EXPECT_EQ(back[0]["objects"][0]["soname"], "app\x7f");
}

}  // namespace
}  // namespace cudoctor::render
