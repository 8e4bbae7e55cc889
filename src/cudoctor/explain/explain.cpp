#include "cudoctor/explain/explain.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cudoctor/rules/catalog.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::explain {

std::string_view to_string(Confidence c) {
  switch (c) {
    case Confidence::confirmed:
      return "confirmed";
    case Confidence::likely:
      return "likely";
    case Confidence::possible:
      break;
  }
  return "possible";
}

namespace {

bool applies(const Cause& c, const Match& m) {
  for (const auto& [name, values] : c.when) {
    const auto it = std::find_if(m.captures.begin(), m.captures.end(), [&](const auto& v) { return v.name == name; });
    if (it == m.captures.end() || std::find(values.begin(), values.end(), it->value) == values.end()) return false;
  }
  return true;
}

const rules::Finding* finding(const report::Report& r, std::string_view id) {
  for (const auto& f : r.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The first fact with this id ("nvidia-smi-header.driver"), nullptr when the log states none.
const LogFact* fact(const Reading& r, std::string_view id) {
  for (const auto& f : r.facts)
    if (f.id == id) return &f;
  return nullptr;
}

// Why the log cannot be this machine's: a driver or framework version it states that the
// machine does not have. "" when nothing contradicts it.
// The machine's driver is view::Machine's, the one witness every rule uses.
std::string other_machine(const Reading& r, const report::Report& rep, const kb::KnowledgeBase& kb) {
  const auto& snap = rep.snapshot;
  const auto live = view::derive(snap, kb).driver.version;
  for (const char* id : {"nvidia-smi-header.driver", "kernel-module.driver"}) {
    const auto* f = fact(r, id);
    const auto stated = f ? util::Version::parse(f->value) : std::nullopt;
    if (stated && live && *stated != *live)
      return fmt::format("the log's driver is {} (line {}), this machine's is {}", f->value, f->line, live->str());
  }
  if (const auto* f = fact(r, "torch-version.version")) {
    bool has_torch = false, same = false;
    for (const auto& env : snap.python.envs)
      for (const auto& fw : env.frameworks)
        if (fw.name == "torch") has_torch = true, same = same || fw.version == f->value;
    if (has_torch && !same)
      return fmt::format("the log's PyTorch is {} (line {}), which no Python environment here has", f->value, f->line);
  }
  return "";
}

}  // namespace

Explanation explain(Reading reading, const Library& lib, const kb::KnowledgeBase& kb, const report::Report* machine) {
  Explanation ex;
  ex.reading = std::move(reading);
  const auto& matches = ex.reading.matches;
  std::vector<std::size_t> order(matches.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (matches[a].signature->priority != matches[b].signature->priority)
      return matches[a].signature->priority > matches[b].signature->priority;
    return matches[a].line < matches[b].line;
  });
  for (const auto i : order) {
    const auto& m = matches[i];
    for (const auto& c : m.signature->causes) {
      if (!applies(c, m)) continue;
      auto it = std::find_if(ex.causes.begin(), ex.causes.end(), [&](const auto& r) { return r.id == c.id; });
      if (it == ex.causes.end()) {
        const auto* entry = rules::find_entry(c.id);
        RankedCause r;
        r.id = c.id;
        r.layer = entry->layer;
        r.severity = entry->severity;
        r.title = std::string(entry->title);
        r.program_fault =
            std::find(lib.program_faults.begin(), lib.program_faults.end(), c.id) != lib.program_faults.end();
        r.because = c.because;
        r.confirm = c.confirm;
        r.fix = c.fix;
        ex.causes.push_back(std::move(r));
        it = ex.causes.end() - 1;
      }
      if (std::find(it->lines.begin(), it->lines.end(), m.line) == it->lines.end() && it->lines.size() < 20)
        it->lines.push_back(m.line);
      if (std::find(it->signatures.begin(), it->signatures.end(), m.signature->id) == it->signatures.end())
        it->signatures.push_back(m.signature->id);
    }
  }

  if (machine) {
    ex.machine.root = machine->snapshot.root;
    ex.machine.other_machine = other_machine(ex.reading, *machine, kb);
    ex.machine.joined = ex.machine.other_machine.empty();
  }
  if (ex.machine.joined) {
    std::vector<RankedCause> kept;
    for (auto& c : ex.causes) {
      std::string refuter;
      if (const auto it = lib.refuted_by.find(c.id); it != lib.refuted_by.end())
        for (const auto& id : it->second)
          if (refuter.empty() && finding(*machine, id)) refuter = id;
      const auto* f = finding(*machine, c.id);
      if (!f && !refuter.empty()) {
        ex.machine.refuted.emplace_back(c.id, refuter);
        continue;
      }
      if (f) {
        c.confidence = Confidence::confirmed;
        c.machine_evidence = f->evidence;
        c.machine_fix = f->fix;
      }
      kept.push_back(std::move(c));
    }
    std::stable_partition(kept.begin(), kept.end(),
                          [](const auto& c) { return c.confidence == Confidence::confirmed; });
    ex.causes = std::move(kept);
  }
  if (!ex.causes.empty() && ex.causes.front().confidence != Confidence::confirmed)
    ex.causes.front().confidence = Confidence::likely;
  ex.arithmetic = arithmetic(ex.reading, lib, kb);
  return ex;
}

}  // namespace cudoctor::explain
