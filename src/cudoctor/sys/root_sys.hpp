#pragma once
// The real Sys: the machine's own files under a root prefix ("/" for the live machine).
#include <memory>

#include "cudoctor/sys/sys.hpp"

namespace cudoctor::sys {

// root: "/" or a directory holding a machine's tree (a fixture, a chroot, a mounted image).
std::unique_ptr<Sys> make_root_sys(std::string root);

}  // namespace cudoctor::sys
