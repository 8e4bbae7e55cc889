#include "cudoctor/render/npd.hpp"

#include <fmt/format.h>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::render {

std::string npd_line(const report::Report& r) {
  // One line of ASCII: NPD keeps the first max_output_length bytes, which must not end inside
  // a character or hold a newline.
  const auto clean = [](const std::string& s) { return ascii_only(util::visible(s)); };
  std::string line;
  if (!r.verdict.healthy) {
    const rules::Finding* brk = nullptr;
    for (const auto& f : r.findings)
      if (f.id == r.verdict.break_finding && !brk) brk = &f;
    line = clean(brk ? brk->id + ": " + brk->title : r.verdict.summary);
    // Without its id when only that makes it fit: the versions in a title say more.
    if (brk && line.size() > k_npd_max_output && clean(brk->title).size() <= k_npd_max_output) line = clean(brk->title);
  } else {
    const auto problems = report::problems(r);
    line = "ok: the GPU stack works";
    if (!problems.empty())
      line +=
          clean(fmt::format("; {} warning{} ({})", problems.size(), problems.size() == 1 ? "" : "s", problems[0]->id));
  }
  if (line.size() > k_npd_max_output) line = line.substr(0, k_npd_max_output - 3) + "...";
  return line + "\n";
}

}  // namespace cudoctor::render
