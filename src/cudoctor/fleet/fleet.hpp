#pragma once
// Many reports at once: the nodes grouped by their configuration (the fingerprint of what they
// were set up with), the broken nodes and why, how each smaller group differs from the most
// common one, and the outliers of a group (nodes set up alike whose problems are not). Reports
// are added one at a time and only a node's verdict and state are kept, so memory grows with
// the number of configurations, not with the reports' size.
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cudoctor/fleet/diff.hpp"

namespace cudoctor::fleet {

// Whether a fact is configuration (driver, GPUs, toolkits, framework builds and the libraries
// they load, CUDA's environment) rather than state (device nodes present, modules loaded, what
// the CUDA runtime answered, which cudoctor wrote the report).
bool is_configuration(const Fact& f);

struct Node {
  std::string name;  // the host name; the file's name when it has none; "host (file)" when taken
  std::string file;
  bool healthy = true;
  std::string break_layer;    // "L1", "" when healthy
  std::string break_finding;  // the id that names the break
  std::string cause;          // that finding's title, else the verdict's sentence
  std::string command;        // its first fix command, "" when none
  // Its problems' ids (report order) and its state facts, shared by the nodes that have the
  // same: what 10,000 reports keep grows with how many kinds of node there are.
  std::shared_ptr<const std::vector<std::string>> problems;
  std::shared_ptr<const std::vector<Fact>> state;
  std::size_t group = 0;
};

// A node set up like the rest of its group whose problems are not those of most of it.
struct Outlier {
  std::size_t node = 0;
  std::vector<std::string> extra;    // problems it has that most of the group has not
  std::vector<std::string> lacking;  // problems most of the group has that it has not
  std::vector<Change> state;         // its state against a typical member's (a: typical, b: it)
};

struct Group {
  std::vector<Fact> configuration;  // the first member's configuration facts
  std::vector<std::size_t> nodes;   // indices into FleetReport::nodes, in reading order
  std::size_t broken = 0;
  std::vector<Change> differs;  // against the most common group (a: it, b: this one); empty for it
  std::vector<Outlier> outliers;
};

struct Skipped {
  std::string file;
  std::string reason;
};

struct FleetReport {
  std::vector<Node> nodes;
  std::vector<Group> groups;  // the most common first, then by size, then by first node
  std::vector<Skipped> skipped;
  std::size_t broken = 0;
  std::map<std::string, std::size_t> problem_counts;  // id -> nodes that have it
  std::map<std::string, std::size_t> versions;        // cudoctor version -> reports it wrote
};

class Aggregate {
 public:
  void add(Digest d);
  void skip(std::string file, std::string reason);
  // The fleet: groups ordered, each compared with the most common, and outliers named.
  FleetReport finish() &&;

 private:
  FleetReport m_r;
  std::unordered_map<std::string, std::size_t> m_by_fingerprint;
  std::unordered_map<std::string, std::shared_ptr<const std::vector<std::string>>> m_problem_sets;
  std::unordered_map<std::string, std::shared_ptr<const std::vector<Fact>>> m_states;
  std::unordered_set<std::string> m_names;
};

}  // namespace cudoctor::fleet
