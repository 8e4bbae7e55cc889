#pragma once
// Reads a pasted log as the signatures need it: line by line in bounded memory, noise taken off
// (ANSI escapes, progress-bar redraws, timestamps, syslog and journal prefixes, [rankN]: and absl
// prefixes) and a kernel message wrapped over several NVRM: lines joined into one.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace cudoctor::explain {

struct Line {
  std::size_t number = 0;  // the first physical line, from 1
  std::string text;        // cleaned; joined when the kernel wrapped it
};

// One physical line without its noise: what follows the last carriage return, no escape
// sequences, no leading timestamps or prefixes, no trailing white space.
std::string clean_line(std::string_view raw);

struct ReadStats {
  std::size_t bytes = 0;
  std::size_t lines = 0;          // physical lines
  std::size_t cut_lines = 0;      // lines longer than k_max_line, read only up to it
  std::size_t control_bytes = 0;  // in the first k_sniff bytes: NUL and other non-text bytes
  std::size_t sniffed = 0;        // how many bytes the count above is over
};

class LogReader {
 public:
  static constexpr std::size_t k_max_line = 64 * 1024;  // a physical line is read up to here
  static constexpr std::size_t k_sniff = 64 * 1024;     // the bytes whose kind decides text or not

  using Sink = std::function<void(Line&&)>;  // a sink may take the line's text
  explicit LogReader(Sink sink) : m_sink(std::move(sink)) {}

  // Takes the next bytes of the log; every logical line completed is given to the sink.
  void feed(std::string_view bytes);
  // The end of the log: the last line, even without a newline.
  void finish();

  const ReadStats& stats() const { return m_stats; }
  // Whether what was read so far looks like binary data rather than a log (judged on the first
  // k_sniff bytes: more than one byte in ten a control byte other than tab, CR, LF, ESC, FF).
  bool looks_binary() const;

 private:
  void end_physical_line();
  void take(Line line);

  Sink m_sink;
  ReadStats m_stats;
  std::string m_raw;  // the physical line being read
  bool m_cut = false;
  Line m_pending;  // the logical line that an NVRM: continuation may still extend
  bool m_has_pending = false;
};

}  // namespace cudoctor::explain
