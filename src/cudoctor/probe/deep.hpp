#pragma once
// check --deep: each environment's interpreter asked, in a process of its own per framework,
// what the framework sees and what it mapped (DeepView), beside L3's static prediction.
#include "cudoctor/probe/context.hpp"
#include "cudoctor/snapshot/snapshot.hpp"

namespace cudoctor::probe {

// The Python program each interpreter runs (deep_script.cpp).
const char* deep_script();

// Fills Framework::deep for torch, tensorflow, jax and cupy in every environment with an
// interpreter. Only on the live machine; from root, an environment owned by another user runs
// as that user.
void probe_deep(Context& ctx, snapshot::PythonFacts& python);

}  // namespace cudoctor::probe
