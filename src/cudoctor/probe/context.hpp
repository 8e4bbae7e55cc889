#pragma once
// What every probe is given: the Sys door, the options, and a place to record fact sources
// that exist but could not be read or parsed.
#include <chrono>
#include <string>
#include <vector>

#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/sys/sys.hpp"

namespace cudoctor::probe {

struct Options {
  std::chrono::milliseconds timeout{10000};          // per round of child-process probes (NVML, L4)
  std::chrono::milliseconds compute_timeout{30000};  // the computation check (L5), every GPU at once
  bool child_probes = true;                          // NVML and the runtime probes in a child
  std::string child_probes_off_reason;               // why not, said in the report ("--no-runtime")
  std::vector<std::string> pythons;                  // --python: interpreters to inspect too
};

class Context {
 public:
  Context(const sys::Sys& sys, Options options) : m_sys(sys), m_options(options) {}
  const sys::Sys& sys() const { return m_sys; }
  const Options& options() const { return m_options; }

  // Records a fact source that exists but gave nothing usable.
  void unreadable(std::string path, std::string reason) {
    m_unreadable.push_back({std::move(path), std::move(reason)});
  }
  // Reads a file that may legitimately be absent: nullopt when missing, recorded as
  // unreadable when present but unreadable.
  std::optional<std::string> read_optional(const std::string& path, std::size_t max_bytes = 1 << 20);
  std::vector<snapshot::Unreadable> take_unreadable() { return std::move(m_unreadable); }

 private:
  const sys::Sys& m_sys;
  Options m_options;
  std::vector<snapshot::Unreadable> m_unreadable;
};

}  // namespace cudoctor::probe
