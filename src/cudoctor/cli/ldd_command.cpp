// `cudoctor ldd FILE…`: 0 all resolved, 1 a library or symbol version missing, 2 unreadable.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

using util::visible;

void add_ldd_options(CLI::App& app, Options& o) {
  auto& lo = o.ldd;
  app.add_option("files", lo.files, "ELF executables or libraries")->type_name("FILE");
  app.add_option("--why", lo.why, "Explain how one library was found (or not)")->type_name("LIB");
  app.add_option("--ld-library-path", lo.ld_library_path,
                 "Resolve with this LD_LIBRARY_PATH instead of the environment's")
      ->type_name("DIRS");
}

int run_ldd(const Options& all) {
  const auto& o = all.common;
  const auto& l = all.ldd;
  const auto sys = sys::make_root_sys(o.root);
  const auto llp = l.ld_library_path ? *l.ld_library_path : sys->env("LD_LIBRARY_PATH").value_or("");
  ld::Resolver resolver(*sys, ld::discover_config(*sys, llp));
  if (l.files.empty()) {
    fmt::print(stderr, "cudoctor ldd: give one or more ELF files, e.g. cudoctor ldd $(which python3)\n");
    return 2;
  }
  int rc = 0;
  std::string out;
  const auto ropts = render_options(o);
  const bool json = o.effective_format() == "json";
  render::JsonWriter w(out);
  // Written out as it is made, a part at a time, when nothing is to change it at the end;
  // --why's output is held, since none at all means the library was not loaded.
  const bool stream = streams(o) && l.why.empty();
  constexpr std::size_t k_part = 1 << 16;
  if (json) {
    // Whole: ~25 KB a tree of libtorch's, grown once, not copied as it doubles.
    out.reserve(stream ? 2 * k_part : l.files.size() << 15);
    w.begin_array();
  }
  for (const auto& given : l.files) {
    auto tree = resolver.load(file_argument(*sys, given));
    if (!tree) {
      fmt::print(stderr, "cudoctor ldd: {}\n", visible(tree.error()));
      rc = 2;
      continue;
    }
    for (const auto& obj : tree->objects)
      if (!obj.found || !obj.missing_versions.empty()) rc = std::max(rc, 1);
    if (json)
      render::ldd_json(w, *tree);
    else if (!l.why.empty())
      out += render::ldd_why(*tree, l.why);
    else
      out += render::ldd_text(*tree, ropts);
    if (stream && out.size() >= k_part) emit_part(out);
  }
  if (!resolver.cache_error().empty() && o.verbose)
    fmt::print(stderr, "cudoctor ldd: {}\n", visible(resolver.cache_error()));
  if (json) {
    w.end_array();
    out += '\n';
  }
  if (!l.why.empty() && out.empty() && rc != 2) {
    fmt::print(stderr, "cudoctor ldd: {} is not among the libraries loaded\n", visible(l.why));
    return 1;
  }
  return emit(finished(o, std::move(out)), rc);
}

}  // namespace cudoctor::cli
