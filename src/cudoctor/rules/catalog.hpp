#pragma once
// The catalog of findings, the single source of every id's layer, severity, title and next
// step. Rules name ids through FindingId, which is checked while compiling: `make_finding`
// with an id not in the table does not build (tests/compile/ shows it).
#include <cstddef>
#include <span>
#include <string>

#include "cudoctor/rules/catalog_data.hpp"

namespace cudoctor::rules {

// The index of id in k_catalog, or the table's size when id is not in it.
constexpr std::size_t catalog_index(std::string_view id) {
  std::size_t i = 0;
  while (i < std::size(k_catalog) && k_catalog[i].id != id) ++i;
  return i;
}

// A finding id known to the catalog. Built only from a constant string, so that an id not in
// the catalog is a compile error (the throw is not a constant expression).
class FindingId {
 public:
  consteval FindingId(const char* id) : m_index(catalog_index(id)) {  // NOLINT: implicit by design
    if (m_index == std::size(k_catalog)) throw "finding id not in the catalog (rules/catalog_data.hpp)";
  }
  const CatalogEntry& entry() const { return k_catalog[m_index]; }
  std::string_view str() const { return entry().id; }
  bool operator==(const FindingId&) const = default;

 private:
  std::size_t m_index;
};

// Tuning findings (ids "tune-…"): settings judged, not links of the chain. They never break
// it and follow from nothing; check shows its tuning warnings under their own heading.
constexpr bool is_tuning(std::string_view id) {
  return id.starts_with("tune-");
}

std::span<const CatalogEntry> catalog();
// The entry for an id read at run time (from a saved report, say); nullptr when unknown.
const CatalogEntry* find_entry(std::string_view id);
// Where the id is documented, relative to the repository: "docs/findings.md#nvml-error".
std::string docs_anchor(std::string_view id);
// A finding with the catalog's id, layer, severity, title and next step filled in.
Finding make_finding(FindingId id);

}  // namespace cudoctor::rules
