#pragma once
// `cudoctor explain`: the signatures a log matches, the facts it states, and its candidate causes
// ranked, alone or joined with the machine's own report.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cudoctor/explain/log_reader.hpp"
#include "cudoctor/explain/signatures.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/report/report.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::explain {

struct CaptureValue {
  std::string name;
  CaptureKind kind = CaptureKind::text;
  std::string value;
};

struct Match {
  const Signature* signature = nullptr;
  std::size_t line = 0;
  std::string text;  // the cleaned line, shortened for display
  std::vector<CaptureValue> captures;
};

struct LogFact {
  std::string id;  // the fact pattern's id
  CaptureKind kind = CaptureKind::text;
  std::string value;
  std::size_t line = 0;
};

// What was read from the log.
struct Reading {
  std::string name;  // the file, or "stdin"
  ReadStats stats;
  bool truncated = false;           // reading stopped at the size limit
  std::vector<Match> matches;       // in line order
  std::size_t matches_dropped = 0;  // beyond the cap
  std::vector<LogFact> facts;
  // With nothing matched: lines that look like errors, for the "what was read" answer.
  std::vector<std::pair<std::size_t, std::string>> error_lines;
};

// The compiled signatures and fact patterns, applied to each line of a log.
class Matcher {
 public:
  static util::Result<Matcher> compile(const Library& lib);
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  ~Matcher();
  void scan(const Line& line, Reading& into) const;
  // Lines in log order, scanned together (faster than one by one).
  void scan(std::span<const Line> lines, Reading& into) const;

  static constexpr std::size_t k_max_matches = 2000;
  static constexpr std::size_t k_max_facts = 200;

 private:
  struct Impl;
  explicit Matcher(std::unique_ptr<Impl> impl);
  void judge(const Line& line, std::string_view lower, Reading& into) const;
  void no_match(const Line& line, Reading& into) const;
  std::unique_ptr<Impl> m;
};

// Lines gathered from a LogReader and given to the matcher a batch at a time.
class Batch {
 public:
  Batch(const Matcher& m, Reading& into) : m_matcher(m), m_into(into) {}
  void add(Line&& l) {
    m_lines.push_back(std::move(l));
    if (m_lines.size() >= 512) flush();
  }
  void flush() {
    m_matcher.scan(std::span<const Line>(m_lines), m_into);
    m_lines.clear();
  }

 private:
  const Matcher& m_matcher;
  Reading& m_into;
  std::vector<Line> m_lines;
};

enum class Confidence { confirmed, likely, possible };
std::string_view to_string(Confidence c);

struct RankedCause {
  std::string id;
  rules::Layer layer = rules::Layer::L0;
  rules::Severity severity = rules::Severity::error;
  std::string title;  // the catalog's
  Confidence confidence = Confidence::possible;
  bool program_fault = false;      // the program or workload, not the environment
  std::vector<std::size_t> lines;  // the log lines that show it
  std::vector<std::string> signatures;
  std::string because;
  std::string confirm;
  std::string fix;
  // Joined with the machine: the finding that confirms it, its evidence and its fix.
  std::vector<std::string> machine_evidence;
  rules::Fix machine_fix;
};

struct MachineJoin {
  bool joined = false;  // ranked with a machine's report
  std::string root;
  std::string other_machine;  // why the log cannot come from that machine, "" when it may
  std::vector<std::pair<std::string, std::string>> refuted;  // cause id, the finding that refutes it
};

struct Explanation {
  Reading reading;
  std::vector<RankedCause> causes;      // in rank order
  std::vector<std::string> arithmetic;  // version arithmetic on what the log says
  MachineJoin machine;
};

// Ranks the causes of what was read: the highest-priority signature first (then the earliest
// line), each signature's causes in its order. With a report, a cause the machine shows comes
// first, "confirmed"; a cause the machine refutes drops; a log whose facts the machine
// contradicts is said to come from another machine and is ranked as offline.
Explanation explain(Reading reading, const Library& lib, const kb::KnowledgeBase& kb, const report::Report* machine);

// The arithmetic on the log's captures and facts: driver API integers to CUDA versions and
// driver branches, framework CUDA to the driver it needs, sonames to CUDA majors, sm_XX to
// architectures, Xids to NVIDIA's catalog.
std::vector<std::string> arithmetic(const Reading& r, const Library& lib, const kb::KnowledgeBase& kb);

}  // namespace cudoctor::explain
