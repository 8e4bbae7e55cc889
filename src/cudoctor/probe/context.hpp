#pragma once
// What every probe is given: the Sys door, the options, and a place to record fact sources
// that exist but could not be read or parsed.
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/sys/sys.hpp"

namespace cudoctor::probe {

// What frameworks and libraries open with dlopen at run time, not through DT_NEEDED: the
// knowledge base's model (runtime_libraries.json), handed to the probe by its caller.
struct RunTimeOpens {
  // "tensorflow 12" (framework and CUDA major) -> sonames its GPU library opens; "{cudnn}" in a
  // soname stands for the build's cuDNN major.
  std::map<std::string, std::vector<std::string>> by_framework;
  struct Opens {
    std::vector<std::string> sonames;
    bool beside_opener = false;  // one in the opener's own directory counts as found
  };
  std::map<std::string, Opens> by_library;  // "libcudnn.so.9" -> what it opens
};

struct Options {
  std::chrono::milliseconds timeout{10000};          // per round of child-process probes (NVML, L4)
  std::chrono::milliseconds compute_timeout{30000};  // the computation check (L5), every GPU at once
  bool child_probes = true;                          // NVML and the runtime probes in a child
  std::string child_probes_off_reason;               // why not, said in the report ("--no-runtime")
  std::string context_probes_off_reason;             // set: NVML alone, no CUDA context, said so (--passive)
  std::vector<std::string> pythons;                  // --python: interpreters to inspect too
  bool deep = false;                                 // check --deep: ask each framework in its interpreter
  // Resolved for each framework found. The caller may still be computing it (the knowledge
  // base is parsed on a second thread while the probes read the machine); none when not valid.
  std::shared_future<RunTimeOpens> run_time_opens;
};

class Context {
 public:
  Context(const sys::Sys& sys, Options options) : m_sys(sys), m_options(options) {}
  const sys::Sys& sys() const { return m_sys; }
  const Options& options() const { return m_options; }

  // Records a fact source that exists but gave nothing usable; a path already recorded
  // keeps its first reason.
  void unreadable(std::string path, std::string reason);
  // The same from a Sys error, which reads "<path>: <reason>": the reason alone is kept.
  void unreadable_error(const std::string& path, const std::string& error);

  // The probes read files and directories only through these, so that a source that exists
  // but cannot be read is recorded, never taken for an absent one. Each returns nullopt
  // (nullptr) when the path is missing, and records the path as unreadable when it is there
  // but cannot be read, listed or mapped.
  std::optional<std::string> read_optional(const std::string& path, std::size_t max_bytes = 1 << 20);
  std::optional<std::vector<std::string>> list_optional(const std::string& path);
  std::shared_ptr<const sys::Blob> map_optional(const std::string& path);
  std::unique_ptr<const sys::Reader> open_optional(const std::string& path);
  // Reads a file whose unreadability says nothing about the machine (another user's first
  // process): nullopt on any failure, nothing recorded.
  std::optional<std::string> read_quiet(const std::string& path, std::size_t max_bytes = 1 << 20);
  // Lists a directory whose unlistability says nothing about the machine (a PATH directory,
  // searchable without read permission, is then asked name by name): nullopt, nothing recorded.
  std::optional<std::vector<std::string>> list_quiet(const std::string& path);

  // The run-time model of Options, waited for if it is still being computed.
  const RunTimeOpens& run_time_opens() const;

  // The loader's search with this root's LD_LIBRARY_PATH, one for every probe: each directory
  // is listed and each ELF file read once per run, not once per probe.
  ld::Resolver& resolver();

  // True when path has been recorded as unreadable.
  bool is_unreadable(const std::string& path) const;
  std::vector<snapshot::Unreadable> take_unreadable() { return std::move(m_unreadable); }

 private:
  const sys::Sys& m_sys;
  Options m_options;
  std::vector<snapshot::Unreadable> m_unreadable;
  std::unique_ptr<ld::Resolver> m_resolver;
  // Each directory is listed once per run, however many probes ask.
  std::map<std::string, std::optional<std::vector<std::string>>, std::less<>> m_listings;
};

}  // namespace cudoctor::probe
