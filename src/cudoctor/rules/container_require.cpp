#include "cudoctor/rules/container_require.hpp"

#include <array>
#include <vector>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules {
namespace {

enum class Op { eq, ne, lt, le, gt, ge };

// NAME, the run of operator characters after it, VALUE; nullopt when it is not one expression.
struct Expr {
  std::string name;
  Op op = Op::eq;
  std::string value;
};

std::optional<Expr> parse_expr(std::string_view e) {
  const auto name_end = e.find_first_of("<>=!");
  if (name_end == 0 || name_end == std::string_view::npos) return std::nullopt;
  const auto op_end = e.find_first_not_of("<>=!", name_end);
  const auto op = e.substr(name_end, op_end == std::string_view::npos ? e.size() - name_end : op_end - name_end);
  static constexpr std::array<std::pair<std::string_view, Op>, 6> ops = {
      {{"=", Op::eq}, {"!=", Op::ne}, {"<", Op::lt}, {"<=", Op::le}, {">", Op::gt}, {">=", Op::ge}}};
  for (const auto& [text, o] : ops)
    if (op == text) {
      if (op_end == std::string_view::npos) return std::nullopt;  // no value
      return Expr{std::string(e.substr(0, name_end)), o, std::string(e.substr(op_end))};
    }
  return std::nullopt;
}

bool holds(std::strong_ordering c, Op op) {
  switch (op) {
    case Op::eq:
      return c == 0;
    case Op::ne:
      return c != 0;
    case Op::lt:
      return c < 0;
    case Op::le:
      return c <= 0;
    case Op::gt:
      return c > 0;
    case Op::ge:
      return c >= 0;
  }
  return false;
}

// One expression: yes, no or unknown; nullopt when nvidia-container-cli would reject it.
std::optional<Met> judge(const Expr& e, const RequireFacts& f) {
  const auto name = util::to_lower(e.name);
  if (name == "brand") {
    if (e.op != Op::eq && e.op != Op::ne) return std::nullopt;
    if (f.brand.empty()) return Met::unknown;
    return (util::to_lower(f.brand) == util::to_lower(e.value)) == (e.op == Op::eq) ? Met::yes : Met::no;
  }
  const std::optional<util::Version>* have = name == "cuda"     ? &f.cuda
                                             : name == "driver" ? &f.driver
                                             : name == "arch"   ? &f.arch
                                                                : nullptr;
  if (!have) return std::nullopt;
  const auto want = util::Version::parse(e.value);
  if (!want) return std::nullopt;
  if (!*have) return Met::unknown;
  return holds(**have <=> *want, e.op) ? Met::yes : Met::no;
}

}  // namespace

RequireVerdict evaluate_require(std::string_view predicate, const RequireFacts& facts) {
  RequireVerdict v;
  bool any_unknown = false;
  bool any_yes = false;
  for (const auto alternative : util::split(predicate, ' ')) {
    if (alternative.empty()) continue;
    if (v.first.empty()) v.first = std::string(alternative);
    Met all = Met::yes;
    for (const auto part : util::split(alternative, ',')) {
      if (part.empty()) continue;
      const auto e = parse_expr(part);
      const auto m = e ? judge(*e, facts) : std::nullopt;
      if (!m) {
        v.valid = false;
        return v;
      }
      if (*m == Met::unknown) all = Met::unknown;
      if (*m == Met::no) {
        all = Met::no;
        break;  // as the toolkit does: what follows a failed expression is not read
      }
    }
    if (all == Met::yes) {
      any_yes = true;
      break;  // the first alternative that holds ends the evaluation
    }
    if (all == Met::unknown && !any_unknown) {
      any_unknown = true;
      v.undecided = std::string(alternative);
    }
  }
  v.met = any_yes ? Met::yes : any_unknown ? Met::unknown : Met::no;
  if (any_yes) v.undecided.clear();
  if (v.first.empty()) v.met = Met::yes;  // nothing required
  return v;
}

std::optional<bool> parse_go_bool(std::string_view s) {
  for (const auto t : {"1", "t", "T", "TRUE", "true", "True"})
    if (s == t) return true;
  for (const auto f : {"0", "f", "F", "FALSE", "false", "False"})
    if (s == f) return false;
  return std::nullopt;
}

}  // namespace cudoctor::rules
