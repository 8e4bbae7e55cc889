#pragma once
// Runs `cudoctor --root <fixture> --json` and `… text`, and looks findings up in the report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixture_root.hpp"
#include "golden.hpp"
#include "run_cli.hpp"

namespace cudoctor::testing {

struct Checked {
  CliResult json_run;
  CliResult text_run;
  nlohmann::json report;

  // The findings with this id.
  std::vector<nlohmann::json> findings(const std::string& id) const {
    std::vector<nlohmann::json> out;
    for (const auto& f : report["findings"])
      if (f["id"] == id) out.push_back(f);
    return out;
  }
  nlohmann::json finding(const std::string& id) const {
    auto all = findings(id);
    return all.empty() ? nlohmann::json() : all.front();
  }
  bool has(const std::string& id) const { return !findings(id).empty(); }
  std::string ids() const {
    std::string s;
    for (const auto& f : report["findings"])
      s += f["id"].get<std::string>() + "(" + f["severity"].get<std::string>() + ") ";
    return s;
  }
};

// Builds the fixture's /etc/ld.so.cache from its ld.so.conf with the real ldconfig, as a
// machine has it (ldconfig -r needs root for its chroot; elsewhere the loader's default
// path is all there is, as on a machine whose cache was never built).
inline void refresh_ld_cache(const FixtureRoot& root) {
  if (::geteuid() != 0 || !std::filesystem::exists(root.host("/etc/ld.so.conf"))) return;
  const auto cmd = "ldconfig -r '" + root.path().string() + "' -X 2>/dev/null";
  (void)std::system(cmd.c_str());
}

inline Checked check_root(const FixtureRoot& root, std::vector<std::string> extra = {},
                          const std::map<std::string, std::string>& env = {}) {
  refresh_ld_cache(root);
  Checked c;
  // Fixture roots hold the simulated vendor libraries built by the tests: --runtime loads them.
  std::vector<std::string> args = {"--root", root.path().string(), "--runtime", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  c.json_run = run_cudoctor(args, env);
  try {
    c.report = nlohmann::json::parse(c.json_run.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\nstdout: " << c.json_run.out << "\nstderr: " << c.json_run.err;
  }
  std::vector<std::string> targs = {"--root", root.path().string(), "--runtime", "--color", "never"};
  targs.insert(targs.end(), extra.begin(), extra.end());
  c.text_run = run_cudoctor(targs, env);
  return c;
}

// Compares c's text report and JSON report, normalised, with tests/golden/machines/<name>.txt
// and <name>.json. Goldens are recorded as root: a normal user's fixes carry sudo and its
// scenarios lack device nodes, so there they are not compared (and the test says so).
inline void expect_goldens(const std::string& name, const Checked& c, const FixtureRoot& r) {
  if (::geteuid() != 0) {
    std::cout << "goldens for " << name << " not compared: they are recorded as root\n";
    return;
  }
  const auto root = r.path().string();
  if (!c.text_run.out.empty()) {
    const auto text = check_golden("machines/" + name + ".txt", normalised_text(c.text_run.out, root));
    EXPECT_TRUE(text.empty()) << text;
  }
  const auto json = check_golden("machines/" + name + ".json", normalised_report(c.report, root).dump(2) + "\n");
  EXPECT_TRUE(json.empty()) << json;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline std::string joined_evidence(const nlohmann::json& f) {
  std::string s;
  for (const auto& e : f["evidence"]) s += e.get<std::string>() + "\n";
  return s;
}

}  // namespace cudoctor::testing
