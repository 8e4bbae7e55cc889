#pragma once
// One row of the finding catalog.
#include <string_view>

#include "cudoctor/rules/finding.hpp"

namespace cudoctor::rules {

struct CatalogEntry {
  std::string_view id;     // stable kebab-case id, the heading of its section in docs/findings.md
  Layer layer;             // the one layer every finding of this id belongs to
  Severity severity;       // the one severity every finding of this id has
  std::string_view title;  // default title; rules may make it specific
  // What to do, for a reader who has only the id (explain, fleet, a JSON consumer); rules
  // replace it with a fix for the machine at hand. Empty for ok and most info findings.
  std::string_view next = {};
};

}  // namespace cudoctor::rules
