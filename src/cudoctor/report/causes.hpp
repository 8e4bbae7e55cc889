#pragma once
// The causal order of findings: which problem explains which. The report decides cause and
// consequence from this one table; rules only state what they see.
#include <span>
#include <string_view>

#include "cudoctor/rules/catalog.hpp"

namespace cudoctor::report {

// One side of a row: a catalog id or "L0".."L5", checked while compiling like FindingId.
class CausePattern {
 public:
  consteval CausePattern(const char* s) : m_text(s) {  // NOLINT: implicit by design
    const bool layer = m_text.size() == 2 && m_text[0] == 'L' && m_text[1] >= '0' && m_text[1] <= '5';
    if (!layer && rules::catalog_index(m_text) == std::size(rules::k_catalog))
      throw "cause table names an id that is not in the catalog";
  }
  std::string_view text() const { return m_text; }

 private:
  std::string_view m_text;
};

// An effect and what can cause it. Either side is a finding id, or "L<n>" for any problem of
// layer n (for an effect) or the most causal error of layer n (for a cause). A finding follows
// from the first cause of its rows present in the report as an error, or as a warning when the
// row names that finding by id.
struct CauseRow {
  CausePattern effect;
  CausePattern cause;
  std::string_view why;  // one line for docs and reviewers
};

std::span<const CauseRow> causal_order();

}  // namespace cudoctor::report
