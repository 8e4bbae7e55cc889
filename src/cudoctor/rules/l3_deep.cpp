// L3, check --deep: what each framework said in its own interpreter, beside the static
// prediction. An import that fails, crashes or hangs; a GPU build that sees no GPU the driver
// has; a matmul that fails or is wrong; a CUDA library mapped from another file than the
// prediction, or one the prediction does not have, with what made the difference when the
// process tells (LD_PRELOAD, a framework imported before it).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <csignal>
#include <cstring>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/rules/fixes.hpp"
#include "cudoctor/rules/l3_view.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules::l3 {
namespace {

std::string how_it_ended(const snapshot::DeepView& d) {
  const auto in = d.last_step.empty() ? std::string() : fmt::format(" in {}", d.last_step);
  if (d.status == "crashed")
    return fmt::format("the interpreter died of signal {} ({}){}", d.signal,
                       ::sigabbrev_np(d.signal) ? ::sigabbrev_np(d.signal) : "?", in);
  if (d.status == "timeout")
    return fmt::format("the interpreter did not finish within {:.0f} s (--timeout){}", d.seconds, in);
  if (d.status == "exited")
    return fmt::format("the interpreter exited with code {}{} before answering", d.exit_code, in);
  if (d.status == "failed_to_start")
    return "the interpreter could not be started: " + d.message + (d.run_as.empty() ? "" : " (as " + d.run_as + ")");
  if (d.status == "no_reply") return fmt::format("the interpreter ended without answering{}", in);
  return d.error;
}

std::vector<std::string> view_evidence(const FrameworkView& v, const snapshot::DeepView& d) {
  std::vector<std::string> ev;
  const auto avail = d.available < 0 ? "not asked" : d.available ? "True" : "False";
  ev.push_back(fmt::format("{} -c 'import {}': {} {}, CUDA {}, GPU available {}, {} device{}{}",
                           fixes::python_of(v.env), v.f.name, v.f.name, d.version.empty() ? "?" : d.version,
                           d.cuda.empty() ? "none" : d.cuda, avail, d.device_count < 0 ? 0 : d.device_count,
                           d.device_count == 1 ? "" : "s",
                           d.devices.empty() ? "" : fmt::format(" ({})", fmt::join(d.devices, ", "))));
  if (!d.arch_list.empty()) ev.push_back(fmt::format("arch list: {}", fmt::join(d.arch_list, " ")));
  if (!d.matmul.empty()) ev.push_back("64×64 matmul on the GPU: " + d.matmul);
  if (!d.error.empty() && d.imported) ev.push_back("raised: " + d.error);
  if (!d.ld_preload.empty()) ev.push_back("LD_PRELOAD=" + d.ld_preload);
  if (!d.preloaded.empty()) ev.push_back(fmt::format("imported before it: {}", fmt::join(d.preloaded, ", ")));
  if (!d.run_as.empty()) ev.push_back("ran as " + d.run_as + ", the owner of the environment");
  ev.push_back(fmt::format("{} shared objects mapped, in {:.1f} s", d.mapped.size(), d.seconds));
  return ev;
}

// What made the process take another file than the prediction.
std::string why_other(const snapshot::DeepView& d, const std::string& mapped) {
  for (const auto entry : util::split(d.ld_preload, d.ld_preload.find(':') != std::string::npos ? ':' : ' '))
    if (!entry.empty() && (entry == mapped || mapped.ends_with("/" + std::string(util::trim(entry)))))
      return "LD_PRELOAD loads it before anything else";
  if (!d.preloaded.empty())
    return fmt::format("{} was imported first (by sitecustomize or a .pth file) and loaded its own copy",
                       fmt::join(d.preloaded, ", "));
  return "neither LD_PRELOAD nor an earlier import explains it: something in the interpreter's start-up, or a dlopen "
         "by full path, loaded it";
}

}  // namespace

void deep_rule(const FrameworkView& v, std::vector<Finding>& out) {
  if (!v.f.deep) return;
  const auto& d = *v.f.deep;
  if (d.status == "skipped") {
    auto f = make_finding("deep-not-run");
    f.title = fmt::format("{}: not asked ({})", v.who, d.message);
    out.push_back(std::move(f));
    return;
  }
  const auto check = fmt::format("{} -c 'import {}'", fixes::python_of(v.env), v.f.name);
  if (d.status != "ok" || !d.imported) {
    auto f = make_finding("deep-import-failed");
    const auto why = how_it_ended(d);
    f.title =
        fmt::format("{} cannot be imported: {}", v.who, why.empty() ? "it raised no error but did not load" : why);
    f.detail =
        "Its interpreter, run on its own in a child process, could not import it: every program of this "
        "environment that imports it fails the same way. cudoctor contained the failure.";
    if (d.status == "timeout")
      f.detail += " A slow disk or a first import that compiles can take long: --timeout gives it longer.";
    f.evidence = view_evidence(v, d);
    if (!d.error.empty() && !d.imported) f.evidence.push_back("raised: " + d.error);
    if (!d.stderr_tail.empty()) f.evidence.push_back("stderr: " + util::printable(d.stderr_tail, 600));
    f.fix = {
        "Read the evidence for the error; the other L3 findings of this environment name a cause where one is "
        "known.",
        {},
        {check}};
    out.push_back(std::move(f));
    return;
  }
  const bool gpu_build = !v.f.cuda.empty() || v.f.cuda_unknown || !d.cuda.empty();
  const bool machine_has_gpu = !v.m.snap.gpus.empty();
  bool trouble = false;
  if (d.available == 0 && gpu_build && machine_has_gpu) {
    trouble = true;
    auto f = make_finding("deep-gpu-not-seen");
    f.title = fmt::format("{} sees no GPU, though it is a CUDA build and this machine has {}", v.who,
                          v.m.snap.gpus.size() == 1 ? "one" : std::to_string(v.m.snap.gpus.size()));
    f.detail =
        "Asked in its own interpreter, the framework finds no usable GPU: its programs run on the CPU. The "
        "finding this one follows from, where there is one, is the reason; otherwise the evidence holds what "
        "the framework said.";
    f.evidence = view_evidence(v, d);
    f.fix = {"Fix what the findings below the framework name; then check what the framework says.", {}, {check}};
    out.push_back(std::move(f));
  }
  if (!d.matmul.empty() && d.matmul != "ok") {
    trouble = true;
    auto f = make_finding("deep-matmul-failed");
    f.title =
        fmt::format("{}: a 64×64 matmul on the GPU {}", v.who, d.matmul == "wrong" ? "gives a wrong result" : "fails");
    f.detail =
        "The framework's own matrix product on the GPU, compared with the same product on the CPU in double "
        "precision, does not come out right: its computations on this GPU cannot be trusted.";
    f.evidence = view_evidence(v, d);
    out.push_back(std::move(f));
  }
  for (const auto& lib : d.libraries) {
    if (lib.mapped.empty() || lib.predicted.empty() || lib.mapped == lib.predicted || lib.mapped == lib.predicted_real)
      continue;
    trouble = true;
    auto f = make_finding("deep-library-differs");
    f.title = fmt::format("{} mapped {} from {}, not the predicted {}", v.who, lib.soname, lib.mapped,
                          lib.predicted_real.empty() ? lib.predicted : lib.predicted_real);
    f.detail = fmt::format(
        "The loader's search as cudoctor follows it gives {}, but the running process has {}: {}. "
        "The framework then runs with a library it was not built and tested with.",
        lib.predicted_real.empty() ? lib.predicted : lib.predicted_real, lib.mapped, why_other(d, lib.mapped));
    f.evidence = {
        fmt::format(
            "predicted: {}{}", lib.predicted,
            lib.predicted_real.empty() || lib.predicted_real == lib.predicted ? "" : " -> " + lib.predicted_real),
        "mapped (/proc/self/maps): " + lib.mapped};
    for (auto& e : view_evidence(v, d)) f.evidence.push_back(std::move(e));
    if (!d.ld_preload.empty())
      f.fix = {"Unset LD_PRELOAD, or take the library off it, before running the framework.", {"unset LD_PRELOAD"}};
    else
      f.fix = {
          "Find what loads the other copy before the framework (sitecustomize, a .pth file, an activation "
          "script) and take it out.",
          {},
          {fmt::format("{} -c 'import site, sys; print(sys.modules.get(\"sitecustomize\"))'",
                       fixes::python_of(v.env))}};
    out.push_back(std::move(f));
  }
  if (!d.extra.empty()) {
    trouble = true;
    auto f = make_finding("deep-library-extra");
    f.title = fmt::format("{} mapped CUDA librar{} the prediction does not have: {}", v.who,
                          d.extra.size() == 1 ? "y" : "ies", fmt::join(d.extra, ", "));
    f.detail =
        "The framework opened these at run time (dlopen) or something loaded them first; cudoctor's static "
        "view of this environment does not include them.";
    for (const auto& x : d.extra)
      if (why_other(d, x).starts_with("LD_PRELOAD")) f.detail += fmt::format(" {}: LD_PRELOAD loads it.", x);
    f.evidence = view_evidence(v, d);
    out.push_back(std::move(f));
  }
  auto f = make_finding(trouble ? FindingId("deep-framework-view") : FindingId("deep-agrees"));
  f.title = trouble ? fmt::format("{}: what it said in its own interpreter", v.who)
                    : fmt::format("{}: its own interpreter agrees with the static view", v.who);
  f.detail =
      "Imported in a child process of its interpreter; the libraries it mapped are those the static prediction "
      "gives.";
  f.evidence = view_evidence(v, d);
  out.push_back(std::move(f));
}

}  // namespace cudoctor::rules::l3
