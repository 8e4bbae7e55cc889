#pragma once
// The report, and a fleet of them, as one self-contained HTML page: styles and script inline,
// nothing fetched from the network, every text HTML-escaped.
#include <string>
#include <string_view>

#include "cudoctor/fleet/fleet.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"

namespace cudoctor::render {

std::string html(const report::Report& r, const Options& o);
std::string fleet_html(const fleet::FleetReport& r, const Options& o);
// --redact on a finished page: each secret matched as the page spells it (HTML-escaped), the
// placeholders written as text ("&lt;host&gt;"), character references never cut.
std::string redact_html(std::string_view page, const Secrets& s);

}  // namespace cudoctor::render
