#pragma once
// A markdown table cell: escaped so that nothing in it (a newline, a '|') breaks the row.
#include <string>

namespace cudoctor::render {

std::string markdown_cell(const std::string& s);

}  // namespace cudoctor::render
