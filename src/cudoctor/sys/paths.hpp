#pragma once
// Lexical operations on logical (root-relative, absolute) paths.
#include <functional>
#include <string>
#include <string_view>

#include "cudoctor/sys/sys.hpp"

namespace cudoctor::sys {

// "/a/./b//../c" -> "/a/c"; relative paths are taken from "/".
std::string normalize(std::string_view path);
// Joins dir and a relative or absolute name, then normalises.
std::string join(std::string_view dir, std::string_view name);
std::string dirname(std::string_view path);
std::string basename(std::string_view path);

// Resolves links component by component with the given lstat and readlink of logical
// paths; absolute link targets restart at the logical root. Sys implementations use it.
util::Result<std::string> canonical_with(std::string_view path,
                                         const std::function<FileStat(const std::string&)>& lstat,
                                         const std::function<util::Result<std::string>(const std::string&)>& readlink);

}  // namespace cudoctor::sys
