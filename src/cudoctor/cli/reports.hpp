#pragma once
// Reports read back from files, for diff and fleet.
#include <string>
#include <vector>

#include "cudoctor/fleet/digest.hpp"
#include "cudoctor/sys/sys.hpp"

namespace cudoctor::cli {

// The largest report file read: a real one is 30-60 KB, one with eight GPUs and many
// environments a few hundred.
inline constexpr std::size_t k_max_report_bytes = 64u << 20;

// Reads the report in a file (regular files only: a FIFO or a device is refused, never
// waited on); the error says what is wrong with it, without the file's name.
util::Result<fleet::Digest> read_report_file(const sys::Sys& sys, const std::string& given);

// The report files an argument names: the file itself, or a directory's *.json files in
// name order (not its subdirectories). An unreadable directory is an error.
util::Result<std::vector<std::string>> report_files(const sys::Sys& sys, const std::string& given);

}  // namespace cudoctor::cli
