#pragma once
// Dynamic string tokens in DT_RPATH, DT_RUNPATH, DT_NEEDED and LD_LIBRARY_PATH.
#include <string>

namespace cudoctor::ld {

// Replaces $ORIGIN, $LIB and $PLATFORM, and their ${…} forms, with the given values, as
// glibc's expand_dynamic_string_token (elf/dl-load.c) does. "$ORIGINAL" is not a token.
std::string substitute(const std::string& s, const std::string& origin, const std::string& lib,
                       const std::string& platform);

}  // namespace cudoctor::ld
