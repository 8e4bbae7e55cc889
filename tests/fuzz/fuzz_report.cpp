// libFuzzer target: report files as diff and fleet read them (RapidJSON, then the digest),
// each input compared with itself and aggregated; any bytes must give a digest or an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cudoctor/fleet/diff.hpp"
#include "cudoctor/fleet/fleet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto d = cudoctor::fleet::read_report(text, "fuzz.json");
  if (!d) return 0;
  const auto same = cudoctor::fleet::diff(*d, *d);
  if (!same.changes.empty() || !same.problems.empty()) __builtin_trap();  // a report differs from itself
  cudoctor::fleet::Aggregate agg;
  agg.add(*d);
  agg.add(std::move(d).value());
  const auto r = std::move(agg).finish();
  if (r.groups.size() != 1 || r.nodes.size() != 2) __builtin_trap();
  return 0;
}
