#pragma once
// The report as a node-problem-detector custom plugin prints it: one line of ASCII, at most
// 80 bytes (NPD's default max_output_length, counted in bytes), that becomes the node
// condition's message; the exit status (check's 0/1/2) is NPD's OK/NonOK/Unknown.
#include <string>

#include "cudoctor/report/report.hpp"

namespace cudoctor::render {

inline constexpr std::size_t k_npd_max_output = 80;

// "module-blocked-by-secure-boot: …" (the break's id and title; the title alone when only that
// fits), "ok: the GPU stack works", or "ok: the GPU stack works; 2 warnings (tune-…)"; cut with
// "..." at 80 bytes.
std::string npd_line(const report::Report& r);

}  // namespace cudoctor::render
