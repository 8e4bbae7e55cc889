#pragma once
// The bytes of an open regular file, for RootSys: read whole, or mapped (guarded against the
// file shrinking, see mapped_file_guard.hpp).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "cudoctor/sys/sys.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::sys {

// Reads fd to its end, at most max_bytes; errors name path.
util::Result<std::string> read_fd(int fd, std::string_view path, std::size_t max_bytes);

// The n bytes of fd mapped read-only; read into memory instead when no guard slot is free
// (a shrinking file would raise SIGBUS). An empty file is an empty blob. Errors name path.
util::Result<std::shared_ptr<const Blob>> map_fd(int fd, std::size_t n, std::string_view path);

}  // namespace cudoctor::sys
