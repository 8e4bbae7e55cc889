#pragma once
// The causal order of findings: which problem explains which. The report decides cause and
// consequence from this one table; rules only state what they see.
#include <span>
#include <string_view>

namespace cudoctor::report {

// An effect and what can cause it. Either side is a finding id, or "L<n>" for any problem of
// layer n (for an effect) or the most causal error of layer n (for a cause). A finding follows
// from the first cause of its rows present in the report as an error, or as a warning when the
// row names that finding by id.
struct CauseRow {
  std::string_view effect;
  std::string_view cause;
  std::string_view why;  // one line for docs and reviewers
};

std::span<const CauseRow> causal_order();

}  // namespace cudoctor::report
