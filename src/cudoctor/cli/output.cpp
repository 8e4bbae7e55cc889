#include "cudoctor/cli/output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/render/html.hpp"
#include "cudoctor/sys/root_sys.hpp"

namespace cudoctor::cli {

namespace {
std::string g_output_file;  // --output: the one destination of this process's output
}  // namespace

void set_output_file(std::string path) {
  g_output_file = std::move(path);
}

int emit(const std::string& out, int rc) {
  if (!g_output_file.empty()) {
    const auto slash = g_output_file.rfind('/');
    const auto dir = slash == std::string::npos ? std::string() : g_output_file.substr(0, slash + 1);
    const auto base = slash == std::string::npos ? g_output_file : g_output_file.substr(slash + 1);
    // A dot-file: node_exporter reads only *.prom and NFD skips dot-files, so neither reads it.
    const auto tmp = fmt::format("{}.{}.{:x}.tmp", dir, base, std::random_device{}());
    auto why = write_file(tmp, out);
    if (why.empty() && std::rename(tmp.c_str(), g_output_file.c_str()) != 0) why = std::strerror(errno);
    if (!why.empty()) {
      std::remove(tmp.c_str());
      std::fputs(fmt::format("cudoctor: cannot write {}: {}\n", g_output_file, why).c_str(), stderr);
      return 2;
    }
    return rc;
  }
  errno = 0;
  const auto n = std::fwrite(out.data(), 1, out.size(), stdout);
  // The last bytes only reach the file at the flush: /dev/full fails there.
  if (std::fflush(stdout) != 0 || n != out.size() || std::ferror(stdout)) {
    const int err = errno;
    // fputs, not fmt::print: with stderr closed or full too there is nobody left to tell.
    const auto msg = fmt::format("cudoctor: cannot write the report: {}\n", err ? std::strerror(err) : "write error");
    std::fputs(msg.c_str(), stderr);
    return 2;
  }
  return rc;
}

namespace {
// for_terminal's question: text for a terminal whose character set is not UTF-8.
bool wants_ascii(const CommonOptions& o) {
  return o.effective_format() == "text" && !utf8_locale();
}
}  // namespace

bool streams(const CommonOptions& o) {
  return g_output_file.empty() && !o.redact && !wants_ascii(o);
}

void emit_part(std::string& out) {
  // A failure sets stdout's error indicator, which emit's ferror reads.
  std::fwrite(out.data(), 1, out.size(), stdout);
  out.clear();
}

std::string write_file(const std::string& path, const std::string& text) {
  errno = 0;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return std::strerror(errno);
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (wrote && closed) return "";
  const int why = err ? err : errno;
  return why ? std::strerror(why) : "write error";
}

render::Secrets secrets(const sys::Sys& sys) {
  probe::Context ctx(sys, {});
  return render::secrets_of(probe::probe_host(ctx));
}

namespace {

std::string redacted(const CommonOptions& o, std::string_view out, const render::Secrets& s) {
  return o.effective_format() == "html" ? render::redact_html(out, s) : render::redact(out, s);
}

}  // namespace

std::string finished(const CommonOptions& o, std::string out) {
  if (o.redact) out = redacted(o, out, secrets(*sys::make_root_sys(o.root)));
  return for_terminal(o, std::move(out));
}

std::string finished(const CommonOptions& o, const report::Report& rep, std::string out) {
  if (o.redact) out = redacted(o, out, render::secrets_of(rep.snapshot.host));
  return for_terminal(o, std::move(out));
}

namespace {

// Now, or SOURCE_DATE_EPOCH's time when it is set (reproducible-builds.org).
std::time_t now() {
  std::time_t t = std::time(nullptr);
  if (const char* e = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const auto v = std::strtoll(e, &end, 10);
    if (end != e && *end == '\0' && v >= 0) t = static_cast<std::time_t>(v);
  }
  return t;
}

// t in UTC as strftime's format writes it; "" when it cannot be.
std::string utc(std::time_t t, const char* format) {
  std::tm tm{};
  if (!::gmtime_r(&t, &tm)) return "";
  char buf[40];
  return std::strftime(buf, sizeof buf, format, &tm) ? std::string(buf) : std::string();
}

std::string generated_at() {
  return utc(now(), "%Y-%m-%d %H:%M UTC");
}

}  // namespace

render::Options render_options(const CommonOptions& o) {
  render::Options r;
  r.tool_version = CUDOCTOR_VERSION;
  r.verbose = o.verbose;
  r.color = o.effective_format() == "text" && use_color(o);
  r.width = output_width();
  r.redacted = o.redact;
  r.command_line = o.command_line;
  r.generated = generated_at();
  return r;
}

render::NfdOptions nfd_options(const CommonOptions& o) {
  render::NfdOptions r;
  r.label_namespace = o.nfd_namespace;
  r.tool_version = CUDOCTOR_VERSION;
  r.generated = generated_at();
  // RFC 3339 in UTC, as NFD's expiry-time directive reads it.
  if (o.nfd_expiry_s > 0) r.expires = utc(now() + static_cast<std::time_t>(o.nfd_expiry_s), "%Y-%m-%dT%H:%M:%SZ");
  return r;
}

std::string for_terminal(const CommonOptions& o, std::string out) {
  if (wants_ascii(o)) return render::ascii_only(out);
  return out;  // moved, not copied: an ldd --json of a toolkit is a megabyte
}

}  // namespace cudoctor::cli
