#pragma once
// L3: what a framework's GPU library loads and what its own libraries were compiled for.
// Used by framework_detect.cpp.
#include <string>

#include "cudoctor/ld/resolver.hpp"
#include "cudoctor/probe/context.hpp"

namespace cudoctor::probe {

// Fills fw's libraries, missing and missing_versions from the loader's resolution of
// fw.gpu_library (error when it cannot be read), and sm_archs and ptx_archs from the fatbins
// of the libraries beside it. site is the site-packages directory fw was found in.
void resolve_framework(Context& ctx, ld::Resolver& resolver, const std::string& site, snapshot::Framework& fw);

// The CUDA major the resolved tree links against, from the soname of its CUDA runtime or
// cuBLAS (libcudart.so.12, libcublas.so.12; CUDA 11's runtime is libcudart.so.11.0), found
// or missing; "" when it links neither.
std::string linked_cuda_major(const snapshot::Framework& fw);

}  // namespace cudoctor::probe
