// `cudoctor explain [FILE|-]`: 0 a cause was found, 1 nothing matched, 2 the input cannot be
// read as a log.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/gather.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/explain/explain.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

namespace {

using util::visible;

constexpr std::size_t k_max_bytes = std::size_t{256} << 20;

constexpr const char* k_usage =
    "cudoctor explain reads an error log and names its cause. Give it the log:\n"
    "  cudoctor explain error.log\n"
    "  python train.py 2>&1 | cudoctor explain -\n"
    "  sudo dmesg | cudoctor explain -\n"
    "  journalctl -k -b | cudoctor explain -\n"
    "Tracebacks, nvidia-smi output, dmesg/journal lines, docker and kubectl errors, pip output all work.\n"
    "--no-live ranks by the log alone; otherwise this machine's own check confirms or rules out causes.\n";

struct Input {
  int fd = -1;
  bool owned = false;
  std::string name;
};

// Opens the log without waiting on a FIFO nobody writes to; "" or an error message.
std::string open_input(const std::string& file, Input& in) {
  if (file.empty() || file == "-") {
    in = {STDIN_FILENO, false, "stdin"};
    return ::isatty(STDIN_FILENO) == 1 ? "usage" : "";
  }
  in.name = file;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fmt::format("{}: {}", visible(file), std::strerror(errno));
  in.fd = fd;
  in.owned = true;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fmt::format("{}: {}", visible(file), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fmt::format("{}: a directory, not a log", visible(file));
  if (::isatty(fd) == 1) return fmt::format("{}: a terminal, not a log", visible(file));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return "";
}

// Reads the log through the matcher; "" or why it is not a log.
std::string read_log(const Input& in, const explain::Matcher& matcher, explain::Reading& reading) {
  explain::Batch batch(matcher, reading);
  explain::LogReader reader([&](explain::Line&& l) { batch.add(std::move(l)); });
  std::string buf(1 << 20, '\0');
  bool sniffed = false;
  std::string head;
  for (;;) {
    const auto n = ::read(in.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fmt::format("{}: {}", visible(in.name), std::strerror(errno));
    if (n == 0) break;
    const std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
    if (!sniffed) {
      head.append(chunk.substr(0, 2 - std::min<std::size_t>(head.size(), 2)));
      if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b')
        return fmt::format("{} is gzip-compressed: zcat {} | cudoctor explain -", visible(in.name),
                           in.name == "stdin" ? "FILE" : visible(in.name));
    }
    reader.feed(chunk);
    if (!sniffed && (reader.stats().sniffed >= explain::LogReader::k_sniff)) {
      sniffed = true;
      if (reader.looks_binary()) break;
    }
    if (reader.stats().bytes >= k_max_bytes) {
      reading.truncated = true;
      break;
    }
  }
  if (reader.looks_binary())
    return fmt::format("{} is not a text log: {} of its first {} bytes are control bytes", visible(in.name),
                       reader.stats().control_bytes, reader.stats().sniffed);
  reader.finish();
  batch.flush();
  reading.stats = reader.stats();
  if (reading.stats.bytes == 0) return fmt::format("{} is empty: nothing to explain", visible(in.name));
  return "";
}

// The signatures: built in, or <--kb DIR>/log_signatures.json when there is one.
const explain::Library* library(const CommonOptions& o, std::string& error) {
  if (o.kb_dir.empty()) return &explain::builtin_library();
  std::ifstream f(o.kb_dir + "/log_signatures.json");
  if (!f) return &explain::builtin_library();
  std::stringstream text;
  text << f.rdbuf();
  static std::optional<explain::Library> lib;
  auto r = explain::parse_library(text.str());
  if (!r) {
    error = r.error();
    return nullptr;
  }
  lib = std::move(*r);
  return &*lib;
}

}  // namespace

void add_explain_options(CLI::App& app, Options& o) {
  app.add_option("file", o.explain.file, "The log: a file, or - for standard input")->type_name("FILE|-");
  app.add_flag("--no-live", o.explain.no_live, "Rank by the log alone, without this machine's own check");
}

int run_explain(const Options& all) {
  const auto& o = all.common;
  std::string error;
  const auto* lib = library(o, error);
  if (!lib) {
    fmt::print(stderr, "cudoctor explain: {}\n", error);
    return 2;
  }
  auto matcher = explain::Matcher::compile(*lib);
  if (!matcher) {
    fmt::print(stderr, "cudoctor explain: {}\n", matcher.error());
    return 2;
  }
  Input in;
  error = open_input(all.explain.file, in);
  explain::Reading reading;
  reading.name = in.name;
  if (error.empty()) error = read_log(in, *matcher, reading);
  if (in.owned && in.fd >= 0) ::close(in.fd);
  if (error == "usage") {
    fmt::print(stderr, "{}", k_usage);
    return 2;
  }
  if (!error.empty()) {
    fmt::print(stderr, "cudoctor explain: {}\n", error);
    return 2;
  }

  std::optional<report::Report> machine;
  if (!all.explain.no_live) {
    auto snap = gather_snapshot(o, CUDOCTOR_VERSION);
    if (!snap) return 2;
    machine = report::build(std::move(*snap), kb::builtin());
  }
  const auto ex = explain::explain(std::move(reading), *lib, kb::builtin(), machine ? &*machine : nullptr);

  const auto ropts = render_options(o);
  const auto format = o.effective_format();
  std::string out;
  if (format == "json")
    out = render::json_text(render::explain_json(ex));
  else if (format == "markdown")
    out = render::explain_markdown(ex);
  else
    out = render::explain_text(ex, ropts);
  out = machine ? finished(o, *machine, std::move(out)) : finished(o, std::move(out));
  return emit(out, ex.causes.empty() ? 1 : 0);
}

}  // namespace cudoctor::cli
