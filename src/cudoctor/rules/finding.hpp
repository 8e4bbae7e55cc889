#pragma once
// Findings: what the rules conclude, each with its evidence and a fix a user can paste.
#include <string>
#include <string_view>
#include <vector>

namespace cudoctor::rules {

enum class Layer { L0 = 0, L1, L2, L3, L4, L5 };
enum class Severity { ok = 0, info, warn, error };

std::string_view to_string(Layer l);     // "L1"
std::string_view layer_name(Layer l);    // "driver"
std::string_view to_string(Severity s);  // "error"

struct Fix {
  Fix() = default;
  Fix(std::string t, std::vector<std::string> c = {}, std::vector<std::string> k = {})
      : text(std::move(t)), commands(std::move(c)), checks(std::move(k)) {}
  std::string text;                   // what to do, one or two sentences
  std::vector<std::string> commands;  // shell commands that change the machine, to paste in order
  std::vector<std::string> checks;    // commands that only look (ls, grep, nvidia-smi), shown as "check:"
  bool operator==(const Fix&) const = default;
};

struct Finding {
  std::string id;  // stable kebab-case catalog id
  Layer layer = Layer::L0;
  Severity severity = Severity::info;
  std::string title;                  // one line: what is wrong (or right)
  std::string detail;                 // why it matters and what it means here
  std::vector<std::string> evidence;  // "file: value" lines the conclusion rests on
  Fix fix;
  // The id of the finding this one follows from (set by report::build from its causal
  // order); "" for a cause or an independent finding.
  std::string follows_from;
  bool operator==(const Finding&) const = default;
};

}  // namespace cudoctor::rules
