// L4 and L5: what the driver API, each CUDA runtime and the computation check answered, family
// by family (l4_driver_api.cpp, l4_cudart.cpp, l5_compute.cpp).
#include <fmt/format.h>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l4_view.hpp"
#include "cudoctor/rules/rules.hpp"
#include "cudoctor/rules/visible_devices.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules {
namespace {

using l4::add_smi;
using l4::hides_every_gpu;

// The start-up file line that sets CUDA_VISIBLE_DEVICES, the last one read; nullptr when none.
const snapshot::GlobalSetting* setting_of(const view::Machine& m) {
  const snapshot::GlobalSetting* last = nullptr;
  for (const auto& g : m.snap.toolkit.global_settings) {
    auto t = std::string_view(g.text);
    if (t.starts_with("export ")) t.remove_prefix(7);
    if (t.starts_with("CUDA_VISIBLE_DEVICES=")) last = &g;
  }
  return last;
}

// Where it was set, as evidence, and the commands that take it out of the file and this shell.
void add_where_set(const view::Machine& m, Finding& f) {
  f.fix.commands = {"unset CUDA_VISIBLE_DEVICES"};
  const auto* g = setting_of(m);
  if (!g) return;
  f.evidence.push_back(fmt::format("{}:{}: {}", g->file, g->line, g->text));
  f.fix.text += fmt::format(" It is set in {} (line {}): remove that line, then start a new shell.", g->file, g->line);
  const auto edit = fmt::format("sed -i '{}{{/CUDA_VISIBLE_DEVICES/d}}' {}", g->line, fixes::shell_quote(g->file));
  f.fix.commands.insert(f.fix.commands.begin(), g->file.starts_with("/etc/") ? fixes::as_root(m, edit) : edit);
}

// CUDA_VISIBLE_DEVICES read against the GPUs known here (L4 need not have run): one that hides
// every GPU, or one whose list an entry cuts short; not when the driver API's cuda-no-device
// already names it as the cause.
void visible_devices_rule(const view::Machine& m, std::vector<Finding>& out) {
  const auto& cvd = m.snap.runtime.cuda_visible_devices;
  if (!cvd) return;
  // The GPUs the driver would list: NVML's, else (outside a container) the PCI bus's.
  std::size_t nvml = 0;
  std::vector<std::string> uuids;
  for (const auto& g : m.snap.gpus)
    if (g.nvml) {
      ++nvml;
      if (!g.nvml->uuid.empty()) uuids.push_back(g.nvml->uuid);
    }
  std::optional<std::size_t> count;
  if (nvml)
    count = nvml;
  else if (!m.in_container && !m.snap.gpus.empty())
    count = m.snap.gpus.size();
  const auto r = read_visible_devices(*cvd, count, uuids);
  if (!r.shown) return;
  for (const auto& f : out)
    if (f.id == "cuda-no-device" && f.title.starts_with("CUDA_VISIBLE_DEVICES=")) return;
  const auto value = util::printable(*cvd);
  if (*r.shown == 0) {
    auto f = make_finding("cuda-visible-devices-hides-gpus");
    f.title = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides every GPU", value);
    f.detail = fmt::format(
        "CUDA reads the list up to the first entry that names no device ({}: {}), so it reports no device to "
        "every program started with it, whatever the machine has: torch.cuda.is_available() is False.",
        r.stopped_at.empty() ? "\"\"" : "\"" + util::printable(r.stopped_at) + "\"", r.why);
    f.evidence.push_back(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" (environment)", value));
    f.fix.text = "Unset it, or list the GPUs to use (indices or UUIDs).";
    add_where_set(m, f);
    add_smi(m, f.fix.checks, "-L");
    out.push_back(std::move(f));
    return;
  }
  if (*r.shown == r.listed) return;
  auto f = make_finding("cuda-visible-devices-cut-short");
  f.title = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" stops at \"{}\": CUDA sees only the {} GPU{} before it", value,
                        util::printable(r.stopped_at), *r.shown, *r.shown == 1 ? "" : "s");
  f.detail = fmt::format(
      "\"{}\" names no device here ({}); CUDA ignores it and every entry after it, so programs see fewer GPUs "
      "than the list asks for.",
      util::printable(r.stopped_at), r.why);
  f.evidence.push_back(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" (environment)", value));
  f.fix.text = "List only GPUs that exist (indices below the GPU count, or UUIDs from nvidia-smi -L).";
  add_where_set(m, f);
  add_smi(m, f.fix.checks, "-L");
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> runtime_rules(const view::Machine& m, const kb::KnowledgeBase& kb) {
  const auto& s = m.snap;
  std::vector<Finding> out;
  if (!s.runtime.ran) {
    if (!s.runtime.not_run_reason.empty()) {
      auto f = make_finding("runtime-not-run");
      f.title = "L4 and L5 not run: " + s.runtime.not_run_reason;
      out.push_back(std::move(f));
    }
    visible_devices_rule(m, out);
    return out;
  }
  l4::driver_api_rules(m, kb, out);
  l4::cudart_rules(m, kb, out);
  l4::compute_rules(m, kb, out);
  if (s.runtime.compute.empty()) {
    auto f = make_finding("compute-not-run");
    f.title = s.runtime.driver_api.devices.empty()
                  ? "Computation check not run: no CUDA device answered"
                  : "Computation check not run: no CUDA runtime works with this driver";
    out.push_back(std::move(f));
  }
  visible_devices_rule(m, out);
  return out;
}

}  // namespace cudoctor::rules
