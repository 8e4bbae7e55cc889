#pragma once
// What the cudart child and the compute child share: the runtime's error codes as facts, and
// libcuda loaded ahead of the runtime.
#include <string>

#include "cudoctor/runtime/library_linux.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::runtime {

using cudaError_t = int;  // cuda_runtime_api.h

// rc with its name and text from cudaGetErrorName/cudaGetErrorString ("cudaError 35" when
// the runtime cannot name it).
snapshot::CudaCall runtime_call(const Library& rt, cudaError_t rc);

// Loads libcuda first, globally, so that the runtime's own dlopen("libcuda.so.1") finds it
// by its soname instead of searching (glibc reuses a loaded object with that soname).
// libcuda "" loads nothing. False with error set when it cannot be loaded.
bool preload_libcuda(Library& cuda, const std::string& libcuda, std::string& error);

}  // namespace cudoctor::runtime
