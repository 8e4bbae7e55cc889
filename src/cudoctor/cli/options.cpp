#include "cudoctor/cli/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <exception>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/nfd.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

CLI::Validator one_of(std::vector<std::string> values) {
  std::string list;
  for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
  // The description stays empty so that help shows the type name ({a,b,c}) alone.
  return CLI::Validator(
      [values, list](const std::string& v) -> std::string {
        for (const auto& ok : values)
          if (v == ok) return "";
        return "'" + v + "' is not one of " + list;
      },
      "");
}

std::string choices(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "{" : ",") + v;
  return out + "}";
}

void add_common_options(CLI::App& app, CommonOptions& o) {
  const std::string output(k_output_group), machine(k_machine_group), probes(k_probe_group), check(k_check_group);
  const std::vector<std::string> formats{"text", "json", "markdown", "html", "prometheus", "npd", "nfd"};
  app.add_option("--format", o.format,
                 "Output format (default text; html: check and fleet; prometheus, npd and nfd: check only)")
      ->check(one_of(formats))
      ->type_name(choices(formats))
      ->group(output);
  app.add_flag("--json", o.json, "Same as --format json")->group(output);
  app.add_option("-o,--output", o.output,
                 "Write to FILE instead of standard output: a temporary file beside it, then renamed over it")
      ->type_name("FILE")
      ->group(output);
  app.add_flag("-v,--verbose", o.verbose, "Show the evidence behind every line, and the Python environments inspected")
      ->group(output);
  const std::vector<std::string> colors{"auto", "always", "never"};
  app.add_option("--color", o.color, "Colour the text report (default auto: on a terminal, unless NO_COLOR is set)")
      ->check(one_of(colors))
      ->type_name(choices(colors))
      ->group(output);
  app.add_flag("--redact", o.redact, "Replace the host name, user names and home directories in the output")
      ->group(output);
  app.add_option("--root", o.root, "Read the file system under DIR (a fixture, chroot or mounted image)")
      ->type_name("DIR")
      ->group(machine);
  app.add_option("--kb", o.kb_dir, "Knowledge-base JSON files that replace the built-in ones")
      ->type_name("DIR")
      ->group(machine);
  app.add_flag("--no-runtime", o.no_runtime,
               "Load no vendor library (NVML, libcuda, libcudart) at all: L4 and L5 are skipped")
      ->group(probes);
  app.add_flag("--passive", o.passive,
               "Touch no GPU: ask NVML only, create no CUDA context and allocate nothing (L4 and L5 are skipped); "
               "for monitors and health checks on GPUs that jobs are using")
      ->group(probes);
  app.add_flag("--runtime", o.runtime,
               "With --root: load the tree's own vendor libraries in the child probes (they are the tree's code)")
      ->group(probes);
  const CLI::Validator seconds(
      [](const std::string& v) -> std::string {
        try {
          std::size_t used = 0;
          const double d = std::stod(v, &used);
          if (used == v.size() && std::isfinite(d) && d >= 0.1 && d <= 3600) return "";
        } catch (const std::exception&) {
        }
        return "'" + v + "' is not a number of seconds (0.1 to 3600)";
      },
      "");
  app.add_option("--timeout", o.timeout_s,
                 "Seconds NVML, the driver API and the runtimes may take (they run at once; default 10)")
      ->check(seconds)
      ->type_name("SEC")
      ->group(probes);
  app.add_option("--compute-timeout", o.compute_timeout_s,
                 "Seconds the computation check (copies and GEMMs on every GPU at once) may take (default 30)")
      ->check(seconds)
      ->type_name("SEC")
      ->group(probes);
  app.add_option("--python", o.pythons, "Also inspect the environment of this interpreter (repeatable)")
      ->type_name("PATH")
      ->group(probes);
  app.add_flag("--deep", o.deep,
               "Import each GPU framework in its own interpreter (a child process, --timeout) and compare what it "
               "sees and maps with the static prediction")
      ->group(check);
  app.add_option("--nfd-namespace", o.nfd_namespace,
                 "With --format nfd: the labels' namespace (default cudoctor.feature.node.kubernetes.io, which "
                 "nfd-master always accepts)")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            const auto why = render::nfd_namespace_problem(v);
            return why.empty() ? "" : "'" + v + "': " + why;
          },
          ""))
      ->type_name("NS")
      ->group(check);
  app.add_option("--nfd-expiry", o.nfd_expiry_s,
                 "With --format nfd: seconds until NFD drops the labels unless the check runs again (default 600; "
                 "0: never)")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            if (const auto n = util::parse_uint(v); n && *n <= 315360000) return "";
            return "'" + v + "' is not a whole number of seconds (0 to 315360000)";
          },
          ""))
      ->type_name("SEC")
      ->group(check);
}

bool apply_common_options(const CLI::App& app, const CommonOptions& o) {
  if (o.root.empty()) {
    fmt::print(stderr, "cudoctor: --root: give a directory (--root / for this machine)\n");
    return false;
  }
  if (!app.count("--kb")) return true;
  // Read through the Sys door: regular files only, and at most 64 MiB each.
  const auto host = sys::make_root_sys("/");
  const auto dir = host->canonical(o.kb_dir.empty() ? std::string("/nonexistent-kb") : o.kb_dir);
  if (o.kb_dir.empty() || !dir || host->stat(*dir).type != sys::FileType::directory) {
    fmt::print(stderr, "cudoctor: --kb {}: not a directory\n", util::visible(o.kb_dir));
    return false;
  }
  auto kb = kb::KnowledgeBase::load_with_overrides(
      *dir, [&](const std::string& path) -> util::Result<std::optional<std::string>> {
        const auto st = host->stat(path);
        if (st.type == sys::FileType::missing && st.error.empty()) return std::optional<std::string>();
        auto text = host->read_file(path, 64u << 20);
        if (!text) return util::error(text.error());
        return std::optional<std::string>(std::move(text).value());
      });
  if (!kb) {
    fmt::print(stderr, "cudoctor: {}\n", util::visible(kb.error()));
    return false;
  }
  kb::set_builtin(std::move(kb).value());
  return true;
}

}  // namespace cudoctor::cli
