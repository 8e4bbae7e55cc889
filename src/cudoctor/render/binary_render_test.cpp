#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cudoctor::render
