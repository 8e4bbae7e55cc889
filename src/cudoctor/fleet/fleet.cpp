#include "cudoctor/fleet/fleet.hpp"

#include <algorithm>
#include <numeric>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::fleet {

namespace {

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

bool is_configuration(const Fact& f) {
  using util::starts_with;
  return !(starts_with(f.key, "runtime.") || starts_with(f.key, "cudoctor.") || f.key == "driver.device_nodes" ||
           f.key == "driver.modules_loaded");
}

void Aggregate::add(Digest d) {
  Node n;
  n.file = d.file;
  n.name = d.host.empty() ? file_name(d.file) : d.host;
  if (!m_names.insert(n.name).second) {
    n.name += " (" + file_name(d.file) + ")";
    m_names.insert(n.name);
  }
  n.healthy = d.healthy;
  n.break_layer = d.break_layer;
  n.break_finding = d.break_finding;
  n.cause = d.summary;
  if (const auto* p = d.problem(d.break_finding)) {
    n.cause = p->title;
    n.command = p->command;
  }
  if (n.healthy) n.cause.clear();
  std::vector<Fact> configuration, state;
  std::string fingerprint, state_key, problem_key;
  for (auto& f : d.facts) {
    auto& key = is_configuration(f) ? fingerprint : state_key;
    key += f.key;
    key += '=';
    key += f.value;
    key += '\n';
    (is_configuration(f) ? configuration : state).push_back(std::move(f));
  }
  std::vector<std::string> problems;
  for (const auto& p : d.problems) {
    problems.push_back(p.id);
    problem_key += p.id + '\n';
    ++m_r.problem_counts[p.id];
  }
  auto& shared_state = m_states[state_key];
  if (!shared_state) shared_state = std::make_shared<const std::vector<Fact>>(std::move(state));
  n.state = shared_state;
  auto& shared_problems = m_problem_sets[problem_key];
  if (!shared_problems) shared_problems = std::make_shared<const std::vector<std::string>>(std::move(problems));
  n.problems = shared_problems;
  ++m_r.versions[d.tool_version.empty() ? "unknown" : d.tool_version];
  const auto [it, fresh] = m_by_fingerprint.emplace(std::move(fingerprint), m_r.groups.size());
  if (fresh) m_r.groups.push_back(Group{std::move(configuration), {}, 0, {}, {}});
  n.group = it->second;
  auto& g = m_r.groups[n.group];
  g.nodes.push_back(m_r.nodes.size());
  if (!n.healthy) {
    ++g.broken;
    ++m_r.broken;
  }
  m_r.nodes.push_back(std::move(n));
}

void Aggregate::skip(std::string file, std::string reason) {
  m_r.skipped.push_back({std::move(file), std::move(reason)});
}

FleetReport Aggregate::finish() && {
  auto& r = m_r;
  // Order groups: the most common first; equal sizes in the order their first node was read.
  std::vector<std::size_t> order(r.groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return r.groups[x].nodes.size() > r.groups[y].nodes.size(); });
  std::vector<Group> groups;
  std::vector<std::size_t> new_index(r.groups.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = i;
    groups.push_back(std::move(r.groups[order[i]]));
  }
  r.groups = std::move(groups);
  for (auto& n : r.nodes) n.group = new_index[n.group];

  for (std::size_t gi = 0; gi < r.groups.size(); ++gi) {
    auto& g = r.groups[gi];
    if (gi > 0) {
      // Lowest layer first: a different driver says more than a different wheel.
      g.differs = changes(r.groups[0].configuration, g.configuration);
      std::stable_sort(g.differs.begin(), g.differs.end(),
                       [](const Change& x, const Change& y) { return x.layer < y.layer; });
    }
    // The group's usual problems: the set most of its nodes share (the first such on a tie).
    std::map<std::vector<std::string>, std::size_t> sets;
    for (auto ni : g.nodes) ++sets[sorted(*r.nodes[ni].problems)];
    std::vector<std::string> usual;
    std::size_t most = 0;
    for (auto ni : g.nodes) {
      auto s = sorted(*r.nodes[ni].problems);
      if (sets[s] > most) {
        most = sets[s];
        usual = std::move(s);
      }
    }
    const Node* typical = nullptr;
    for (auto ni : g.nodes)
      if (sorted(*r.nodes[ni].problems) == usual) {
        typical = &r.nodes[ni];
        break;
      }
    for (auto ni : g.nodes) {
      const auto mine = sorted(*r.nodes[ni].problems);
      if (mine == usual) continue;
      Outlier o;
      o.node = ni;
      std::set_difference(mine.begin(), mine.end(), usual.begin(), usual.end(), std::back_inserter(o.extra));
      std::set_difference(usual.begin(), usual.end(), mine.begin(), mine.end(), std::back_inserter(o.lacking));
      if (typical) o.state = changes(*typical->state, *r.nodes[ni].state);
      g.outliers.push_back(std::move(o));
    }
  }
  return std::move(r);
}

}  // namespace cudoctor::fleet
