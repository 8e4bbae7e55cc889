#include "cudoctor/compat/binary.hpp"

#include <fmt/format.h>

namespace cudoctor::compat {

std::string Target::name() const {
  return fmt::format("{}_{}{}{}", kind == Kind::cubin ? "sm" : "compute", major, minor,
                     variant ? std::string(1, variant) : std::string());
}

util::Version Target::cc() const {
  return util::Version{{major, minor}, ""};
}

std::optional<util::Version> parse_cc(std::string_view text) {
  auto v = util::Version::parse(text);
  if (!v || v->parts.size() != 2) return std::nullopt;
  return v;
}

std::optional<Target> parse_target(std::string_view text) {
  Target t;
  if (text.starts_with("sm_")) {
    t.kind = Target::Kind::cubin;
    text.remove_prefix(3);
  } else if (text.starts_with("compute_")) {
    t.kind = Target::Kind::ptx;
    text.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
    t.variant = text.back();
    text.remove_suffix(1);
  }
  // Two or three digits: the last is the minor ("89" is 8.9, "100" is 10.0, "120" is 12.0).
  if (text.size() < 2 || text.size() > 3 || text.front() == '0') return std::nullopt;
  int n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  t.major = n / 10;
  t.minor = n % 10;
  return t;
}

Target cubin_for(const util::Version& cc) {
  return {Target::Kind::cubin, cc.major(), cc.minor(), 0};
}
Target ptx_for(const util::Version& cc) {
  return {Target::Kind::ptx, cc.major(), cc.minor(), 0};
}

bool target_fits(const Target& t, const util::Version& cc) {
  const bool exact = t.major == cc.major() && t.minor == cc.minor();
  if (t.variant == 'a') return exact;
  const bool family = t.major == cc.major() && t.minor <= cc.minor();
  if (t.kind == Target::Kind::cubin || t.variant == 'f') return family;
  // Portable PTX: any compute capability at or above its own.
  return t.cc() <= cc;
}

std::string Verdict::describe() const {
  if (!via) return "";
  return via->kind == Target::Kind::cubin ? via->name() + " cubin" : via->name() + " PTX (JIT)";
}

Verdict runs_on(std::span<const Target> targets, const util::Version& cc, bool jit_possible) {
  Verdict v;
  const Target* best_cubin = nullptr;
  const Target* best_ptx = nullptr;
  // Closest first: the highest compute capability that fits; at equal ones, the
  // architecture-specific build (it is made for exactly this GPU), then the family's.
  const auto rank = [](const Target& t) { return t.variant == 'a' ? 2 : t.variant == 'f' ? 1 : 0; };
  const auto better = [&](const Target& a, const Target* b) {
    return !b || a.cc() > b->cc() || (a.cc() == b->cc() && rank(a) > rank(*b));
  };
  for (const auto& t : targets) {
    if (!target_fits(t, cc)) continue;
    auto& best = t.kind == Target::Kind::cubin ? best_cubin : best_ptx;
    if (better(t, best)) best = &t;
  }
  if (best_cubin) {
    v.via = *best_cubin;
    v.how =
        best_cubin->major == cc.major() && best_cubin->minor == cc.minor() ? How::exact_cubin : How::compatible_cubin;
  } else if (best_ptx && jit_possible) {
    v.via = *best_ptx;
    v.how = How::ptx_jit;
  } else if (best_ptx) {
    v.ptx_denied = *best_ptx;
  }
  return v;
}

}  // namespace cudoctor::compat
