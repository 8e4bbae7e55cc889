#pragma once
// Queries NVML from a library file, in the calling process: only ever call it inside
// run_in_child. Returns the facts as JSON text (see nvml_child_linux.cpp for the keys).
#include <chrono>
#include <string>

#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::runtime {

std::string query_nvml(const std::string& host_library_path);

// nvml.h's name of an nvmlReturn_t ("NVML_ERROR_DRIVER_NOT_LOADED"; "NVML_ERROR_?" for a
// code it does not know), as NvmlFacts::init_error_name carries it.
std::string nvml_return_name(int rc);

// Runs query_nvml in a child and turns its answer into NvmlFacts (outcome filled in always).
snapshot::NvmlFacts probe_nvml(const std::string& host_library_path, std::chrono::milliseconds timeout);

}  // namespace cudoctor::runtime
