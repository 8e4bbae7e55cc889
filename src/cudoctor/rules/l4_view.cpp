#include "cudoctor/rules/l4_view.hpp"

#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/visible_devices.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::rules::l4 {

std::string kernel_log(const view::Machine& m, std::string_view grep_args) {
  return fmt::format("{} | grep -i {}", fixes::as_root(m, "dmesg"), grep_args);
}

void add_smi(const view::Machine& m, std::vector<std::string>& checks, std::string_view args) {
  if (m.has_tool("nvidia-smi")) checks.push_back(fmt::format("nvidia-smi {}", args));
}

std::vector<std::string> plan_commands(const view::Machine& m) {
  const auto plan = fixes::plan_command(m);
  return plan.empty() ? std::vector<std::string>{} : std::vector<std::string>{plan};
}

bool hides_every_gpu(const std::string& v) {
  const auto r = read_visible_devices(v, std::nullopt, {});
  return r.shown && *r.shown == 0;
}

std::string call_text(const snapshot::CudaCall& c, const kb::KnowledgeBase& kb, const char* api) {
  auto name = c.name;
  // The stub library has no error names; NVIDIA's headers (the knowledge base) do.
  if (const auto* e = kb.cuda_error(api, c.code); e && (name.empty() || name.starts_with("CUresult"))) name = e->name;
  return fmt::format("{} {}{}", c.code, name, c.message.empty() ? "" : " \"" + c.message + "\"");
}

std::string outcome_title(const snapshot::ChildOutcome& o, const std::string& what_alone, const std::string& lib) {
  // "cuInit hung", or with the call it was in: "The driver API check hung in cuInit".
  const auto what =
      o.last_call.empty() || o.status == snapshot::ChildStatus::load_failed || what_alone.ends_with(o.last_call)
          ? what_alone
          : what_alone + " (in " + o.last_call + ")";
  if (lib.empty()) {
    if (o.status == snapshot::ChildStatus::crashed) return fmt::format("{} crashed: {}", what, o.message);
    if (o.status == snapshot::ChildStatus::timeout) return fmt::format("{} hung: no answer ({})", what, o.message);
    if (o.status == snapshot::ChildStatus::load_failed) return fmt::format("{} could not be loaded", what);
    return fmt::format("{} gave no answer ({}: {})", what, snapshot::to_string(o.status), o.message);
  }
  if (o.status == snapshot::ChildStatus::crashed) return fmt::format("{} crashed: {} in {}", what, o.message, lib);
  if (o.status == snapshot::ChildStatus::timeout)
    return fmt::format("{} hung: no answer from {} ({})", what, lib, o.message);
  if (o.status == snapshot::ChildStatus::load_failed) return fmt::format("{} could not load {}", what, lib);
  return fmt::format("{} gave no answer from {} ({}: {})", what, lib, snapshot::to_string(o.status), o.message);
}

Finding implausible(FindingId id, const std::string& who, const std::string& lib, const std::vector<std::string>& bad) {
  auto f = make_finding(id);
  f.title = fmt::format("{} answered with values that cannot be true: {}{}", who, bad.front(),
                        bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : "");
  f.detail = fmt::format(
      "No CUDA library of NVIDIA's reports these: {} is damaged, is not NVIDIA's, or answered "
      "garbage, so cudoctor does not take its answer as healthy.",
      lib);
  for (const auto& b : bad) f.evidence.push_back(fmt::format("{}: {}", lib, b));
  f.fix = {"Check which file this is and where it comes from; reinstall the driver or toolkit it belongs to.",
           {},
           {"ls -l " + fixes::shell_quote(lib), "cudoctor ldd " + fixes::shell_quote(lib)}};
  return f;
}

std::string cuda_str(int encoded) {
  return encoded > 0 ? util::cuda_version_string(encoded) : "none";
}

}  // namespace cudoctor::rules::l4
