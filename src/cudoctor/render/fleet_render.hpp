#pragma once
// `cudoctor diff` and `cudoctor fleet` printed: text for a person, JSON for a script, markdown
// for an issue or a wiki page.
#include <nlohmann/json.hpp>
#include <string>

#include "cudoctor/fleet/diff.hpp"
#include "cudoctor/fleet/fleet.hpp"
#include "cudoctor/render/render.hpp"

namespace cudoctor::render {

std::string diff_text(const fleet::Digest& a, const fleet::Digest& b, const fleet::Diff& d, const Options& o);
nlohmann::json diff_json(const fleet::Digest& a, const fleet::Digest& b, const fleet::Diff& d);
std::string diff_markdown(const fleet::Digest& a, const fleet::Digest& b, const fleet::Diff& d);

// One screen: the counts, the broken nodes and why, the configurations and what sets each
// apart, the files skipped; verbose lists every node and difference instead of the first few.
std::string fleet_text(const fleet::FleetReport& r, const Options& o);
nlohmann::json fleet_json(const fleet::FleetReport& r);
std::string fleet_markdown(const fleet::FleetReport& r);

// "NVIDIA H200 ×8, driver 580.159.04, torch 2.11.0+cu130": a configuration in one line.
std::string configuration_label(const std::vector<fleet::Fact>& facts);

}  // namespace cudoctor::render
