// `cudoctor archs FILE…`: 0 listed (and, with --cc, runs), 1 does not run there, 2 unreadable.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/compat/binary.hpp"
#include "cudoctor/elf/fatbin.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::cli {

using util::visible;

void add_archs_options(CLI::App& app, Options& o) {
  auto& ao = o.archs;
  app.add_option("files", ao.files, "ELF files: executables, libraries, .cubin or .fatbin")->type_name("FILE");
  app.add_option("--cc", ao.cc, "Also say whether each file can run on this compute capability")->type_name("X.Y");
}

int run_archs(const Options& all) {
  const auto& o = all.common;
  const auto& a = all.archs;
  const auto sys = sys::make_root_sys(o.root);
  if (a.files.empty()) {
    fmt::print(stderr, "cudoctor archs: give one or more ELF files, e.g. cudoctor archs ./app --cc 8.9\n");
    return 2;
  }
  std::optional<util::Version> cc;
  if (!a.cc.empty()) {
    cc = compat::parse_cc(a.cc);
    if (!cc) {
      fmt::print(stderr, "cudoctor archs: --cc {}: not a compute capability (like 8.9)\n", visible(a.cc));
      return 2;
    }
  }
  int rc = 0;
  nlohmann::json files = nlohmann::json::array();
  std::string out;
  for (const auto& given : a.files) {
    const auto f = file_argument(*sys, given);
    const auto blob = sys->map_file(f);
    if (!blob) {
      fmt::print(stderr, "cudoctor archs: {}\n", visible(blob.error()));
      rc = 2;
      continue;
    }
    const auto elf = elf::parse_elf((*blob)->data(), (*blob)->size());
    if (!elf) {
      fmt::print(stderr, "cudoctor archs: {}: {}\n", visible(f), visible(elf.error()));
      rc = 2;
      continue;
    }
    const auto fb = elf::read_fatbin(*elf, (*blob)->data(), (*blob)->size());
    if ((*blob)->shrank()) {
      fmt::print(stderr, "cudoctor archs: {}: changed while it was read (the file shrank)\n", visible(f));
      rc = 2;
      continue;
    }
    if (!fb) {
      fmt::print(stderr, "cudoctor archs: {}: {}\n", visible(f), visible(fb.error()));
      rc = 2;
      continue;
    }
    std::optional<render::RunsOn> runs_on;
    if (cc) {
      runs_on = render::RunsOn{*cc, *fb ? elf::can_run(**fb, *cc) : compat::Verdict{}};
      if (!runs_on->verdict.runs() && rc == 0) rc = 1;
    }
    files.push_back(render::archs_json(f, *fb, runs_on));
    out += render::archs_text(f, *fb, runs_on);
  }
  if (o.effective_format() == "json") out = render::json_text(files);
  return emit(finished(o, std::move(out)), rc);
}

}  // namespace cudoctor::cli
