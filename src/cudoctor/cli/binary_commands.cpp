#include <fmt/format.h>

#include <filesystem>

#include "cudoctor/cli/check_command.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/elf/fatbin.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::cli {

using util::visible;

int run_ldd(const CommonOptions& o, const LddOptions& l) {
  const auto sys = sys::make_root_sys(o.root);
  const auto llp = l.ld_library_path ? *l.ld_library_path : sys->env("LD_LIBRARY_PATH").value_or("");
  ld::Resolver resolver(*sys, ld::discover_config(*sys, llp));
  int rc = 0;
  nlohmann::json all = nlohmann::json::array();
  std::string out;
  render::Options ropts;
  ropts.color = o.effective_format() == "text" && use_color(o);
  for (const auto& given : l.files) {
    // A relative path is taken from the current directory, as ld.so takes it.
    const auto f = (sys->is_live() && !given.empty() && given.front() != '/')
                       ? std::filesystem::current_path().string() + "/" + given
                       : given;
    auto tree = resolver.load(f);
    if (!tree) {
      fmt::print(stderr, "cudoctor ldd: {}\n", visible(tree.error()));
      rc = 2;
      continue;
    }
    for (const auto& obj : tree->objects)
      if (!obj.found || !obj.missing_versions.empty()) rc = std::max(rc, 1);
    if (o.effective_format() == "json")
      all.push_back(render::ldd_json(*tree));
    else if (!l.why.empty())
      out += render::ldd_why(*tree, l.why);
    else
      out += render::ldd_text(*tree, ropts);
  }
  if (!resolver.cache_error().empty() && o.verbose)
    fmt::print(stderr, "cudoctor ldd: {}\n", visible(resolver.cache_error()));
  if (o.effective_format() == "json") out = render::json_text(all);
  if (!l.why.empty() && out.empty() && rc != 2) {
    fmt::print(stderr, "cudoctor ldd: {} is not among the libraries loaded\n", visible(l.why));
    return 1;
  }
  return emit(redacted(o, *sys, out), rc);
}

int run_archs(const CommonOptions& o, const ArchsOptions& a) {
  const auto sys = sys::make_root_sys(o.root);
  std::optional<util::Version> cc;
  if (!a.cc.empty()) {
    cc = util::Version::parse(a.cc);
    if (!cc || cc->parts.size() != 2) {
      fmt::print(stderr, "cudoctor archs: --cc {}: not a compute capability (like 8.9)\n", visible(a.cc));
      return 2;
    }
  }
  int rc = 0;
  nlohmann::json all = nlohmann::json::array();
  std::string out;
  for (const auto& given : a.files) {
    const auto f = (sys->is_live() && !given.empty() && given.front() != '/')
                       ? std::filesystem::current_path().string() + "/" + given
                       : given;
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
    auto j = render::archs_json(f, *fb);
    std::string text = render::archs_text(f, *fb);
    if (cc) {
      const auto v = *fb ? elf::can_run(**fb, *cc) : compat::Verdict{};
      j["runs_on"] = {{"cc", cc->str()}, {"runs", v.runs()}, {"via", v.describe()}};
      text += v.runs()
                  ? fmt::format("  runs on compute capability {}: {}\n", cc->str(), v.describe())
                  : fmt::format("  does not run on compute capability {}: no compatible cubin or PTX\n", cc->str());
      if (!v.runs() && rc == 0) rc = 1;
    }
    all.push_back(j);
    out += text;
  }
  if (o.effective_format() == "json") out = render::json_text(all);
  return emit(redacted(o, *sys, out), rc);
}

}  // namespace cudoctor::cli
