#include "cudoctor/rules/catalog.hpp"

namespace cudoctor::rules {

std::span<const CatalogEntry> catalog() {
  return k_catalog;
}

const CatalogEntry* find_entry(std::string_view id) {
  const auto i = catalog_index(id);
  return i < std::size(k_catalog) ? &k_catalog[i] : nullptr;
}

std::string docs_anchor(std::string_view id) {
  // GitHub's anchor for a heading "### `id`": the backticks drop out, kebab-case stays.
  return "docs/findings.md#" + std::string(id);
}

Finding make_finding(FindingId id) {
  const auto& e = id.entry();
  Finding f;
  f.id = std::string(e.id);
  f.layer = e.layer;
  f.severity = e.severity;
  f.title = std::string(e.title);
  if (!e.next.empty()) f.fix.text = std::string(e.next);
  return f;
}

std::string_view to_string(Layer l) {
  constexpr std::string_view names[] = {"L0", "L1", "L2", "L3", "L4", "L5"};
  return names[static_cast<int>(l)];
}

std::string_view layer_name(Layer l) {
  constexpr std::string_view names[] = {"host", "driver", "toolkit", "framework", "runtime", "application"};
  return names[static_cast<int>(l)];
}

std::string_view to_string(Severity s) {
  constexpr std::string_view names[] = {"ok", "info", "warn", "error"};
  return names[static_cast<int>(s)];
}

}  // namespace cudoctor::rules
