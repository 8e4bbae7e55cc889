#pragma once
// Where every command's output goes: stdout or a file, with write errors reported, and what
// --redact takes out of it.
#include <string>

#include "cudoctor/cli/options.hpp"
#include "cudoctor/render/nfd.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/report/report.hpp"
#include "cudoctor/sys/sys.hpp"

namespace cudoctor::cli {

// Writes out to stdout and flushes it, or with --output to that file: written beside it as a
// hidden temporary file, then renamed over it, so a reader (node_exporter's textfile
// collector, NFD) never sees half a file. A write that fails (a full disk, /dev/full) prints
// "cudoctor: cannot write the report: <reason>" and gives 2; otherwise rc.
int emit(const std::string& out, int rc);
// Whether a command's output may go to standard output as it is made (emit_part) instead of
// whole at the end: no --output file (written whole, then renamed) and nothing for finished()
// to change (no --redact, no ASCII stand-ins). An ldd --json of a toolkit is a megabyte; held
// whole, every page of it is a page fault.
bool streams(const CommonOptions& o);
// Writes out to standard output now, unflushed, and empties it (keeping its memory); a write
// error is reported by the emit that ends the output.
void emit_part(std::string& out);
// Where emit writes: "" standard output, else this file (main sets it from --output).
void set_output_file(std::string path);
// Writes text to path (created or truncated) and closes it; "" when every byte got there,
// else the reason ("No space left on device").
std::string write_file(const std::string& path, const std::string& text);
// The user names, homes and host names of the machine sys examines, for --redact.
render::Secrets secrets(const sys::Sys& sys);
// What a command writes, finished for writing: with --redact the secrets replaced (those of
// the report's machine, or of the --root the options name), then for_terminal's ASCII where
// the locale needs it. Every command's output goes through one of these.
std::string finished(const CommonOptions& o, std::string out);
std::string finished(const CommonOptions& o, const report::Report& rep, std::string out);

// The renderers' options for these flags and this terminal: colour, -v, the width to wrap at.
render::Options render_options(const CommonOptions& o);
// --format nfd's namespace, and its expiry: --nfd-expiry seconds from now.
render::NfdOptions nfd_options(const CommonOptions& o);
// Text output as the terminal can show it: ASCII stand-ins for the symbols when the locale's
// character set is not UTF-8 (JSON and markdown, which are files, stay UTF-8).
std::string for_terminal(const CommonOptions& o, std::string out);

}  // namespace cudoctor::cli
