#pragma once
// What one cudoctor report says that matters when machines are compared: its stable facts
// (driver, GPUs, toolkits, the libraries each framework loads, CUDA's environment) and its
// problems, read from the report's JSON. What changes from one minute to the next
// (temperatures, clocks, utilisation, memory in use, timings) and what names one machine (host
// name, GPU UUIDs) is left out by construction, so it cannot show as a difference.
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/util/result.hpp"

namespace cudoctor::fleet {

// One fact: a stable key, its value as the report gives it, and the layer a difference in it
// would break (0 host … 5 compute), for ranking.
struct Fact {
  std::string key;    // "driver.kernel_module", "gpu0.name", "torch.library.libcudnn.so.9"
  std::string value;  // "580.159.04", "9.1.0 /opt/venv/…/libcudnn.so.9"
  int layer = 0;
  bool operator==(const Fact&) const = default;
};

// A problem the report names (a warning or an error); ok and info findings are not kept.
struct Problem {
  std::string id;        // catalog id: "driver-module-mismatch"
  std::string layer;     // "L1"
  std::string severity;  // "error" | "warn"
  std::string title;
  std::string text;     // the title, detail and evidence joined: what a difference is matched in
  std::string command;  // the first fix command, "" when none
  bool operator==(const Problem&) const = default;
};

struct Digest {
  std::string file;          // as given on the command line
  std::string host;          // host.hostname, "" when the report has none
  int schema = 0;            // the report's schema version
  std::string tool_version;  // the cudoctor that wrote it
  bool healthy = true;
  std::string break_layer;    // "L1", "" when healthy
  std::string break_finding;  // the id that names the break
  std::string summary;        // the verdict's sentence
  std::vector<Fact> facts;    // sorted by key, each key once
  std::vector<Problem> problems;
  // The fact with this key, or nullptr.
  const Fact* find(std::string_view key) const;
  // The problem with this id, or nullptr.
  const Problem* problem(std::string_view id) const;
};

// The newest report schema this cudoctor reads.
int newest_schema();

// Reads one report (cudoctor --json) given as text. A truncated document, JSON that is not a
// cudoctor report, and a newer schema are errors in words that name what is wrong.
util::Result<Digest> read_report(std::string_view text, std::string file);

// "580.159.04 (open)": a fact's value, shortened for one line of text (at most max chars).
std::string shorten(std::string_view value, std::size_t max = 60);

}  // namespace cudoctor::fleet
