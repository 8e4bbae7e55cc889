#pragma once
// L3: the frameworks in one site-packages directory, found by the files their builds write
// (version.py, build_info.py) or by their wheels' names, without running Python. Used by
// python_probe.cpp.
#include <string>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/context.hpp"

namespace cudoctor::probe {

// Adds to env the frameworks in its site-packages directory site, and to env.nvidia_packages
// the nvidia_* distributions there. owner is the environment site belongs to (env's own
// prefix, or its base's when inherited): who installed a framework is read from it. An
// inherited framework that env already has from its own directories is not imported from the
// base (it comes later on sys.path) and is left out.
void frameworks_in(Context& ctx, ld::Resolver& resolver, const std::string& site, const std::string& owner,
                   bool inherited, snapshot::PythonEnv& env);

}  // namespace cudoctor::probe
