#pragma once
// The catalog of findings: one row per id. Ids are never reused or renamed; every id is
// documented in docs/findings.md under its own heading.
#include <span>

#include "cudoctor/rules/finding.hpp"

namespace cudoctor::rules {

struct CatalogEntry {
  std::string_view id;
  Layer layer;
  Severity severity;
  std::string_view title;  // default title; rules may make it specific
};

std::span<const CatalogEntry> catalog();
// The entry for id; an unknown id is a bug (throws std::logic_error).
const CatalogEntry& catalog_entry(std::string_view id);
// A finding with the catalog's layer, severity and title filled in.
Finding make_finding(std::string_view id);

}  // namespace cudoctor::rules
