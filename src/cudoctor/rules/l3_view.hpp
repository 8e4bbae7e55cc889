#pragma once
// What the L3 (framework) rules share: one framework in one Python environment as they see
// it, and the rules for it, one function per finding (framework_rules.cpp calls them in
// causal order).
#include <string>
#include <vector>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/rules/finding.hpp"
#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/view/machine.hpp"

namespace cudoctor::rules::l3 {

// One framework in one environment, with what every finding about it starts from.
struct FrameworkView {
  const view::Machine& m;
  const kb::KnowledgeBase& kb;
  const snapshot::PythonEnv& env;
  const snapshot::Framework& f;
  std::string who;                   // "PyTorch 2.5.1+cu124 (/home/u/venv/bin/python3)"
  std::vector<std::string> base_ev;  // its version, CUDA and location
};

// The framework's name as the knowledge base displays it ("PyTorch" for torch); the name
// itself when the knowledge base has no record of it.
std::string display_name(const kb::KnowledgeBase& kb, const std::string& name);

// What the fix does, in words, for the kind of environment it is printed for.
std::string install_text(const FrameworkView& v, const std::string& what);
// The commands that put the build `plan` recommends into this environment, none when no build
// runs here.
std::vector<std::string> install_commands(const FrameworkView& v);
// "libcudnn.so.9 -> /…/libcudnn.so.9 (RUNPATH), ships /…" for each library of the framework.
std::vector<std::string> lib_evidence(const snapshot::Framework& f);

// framework-rocm-build (l3_build.cpp). Returns true when it fired: nothing else applies.
bool rocm_build_rule(const FrameworkView& v, std::vector<Finding>& out);
// cpu-only-build (l3_build.cpp). Returns true when it fired: nothing else applies.
bool cpu_only_rule(const FrameworkView& v, std::vector<Finding>& out);
// jax-components-mismatch (l3_jax.cpp): jax, jaxlib and the CUDA plugin wheels disagree.
bool jax_components_rule(const FrameworkView& v, std::vector<Finding>& out);
// framework-library-missing: a GPU library unreadable or a dependency not found
// (l3_libraries.cpp). Returns whether it fired.
bool missing_libraries_rule(const FrameworkView& v, std::vector<Finding>& out);
// framework-symbol-version-missing (l3_libraries.cpp). Returns whether it fired.
bool symbol_versions_rule(const FrameworkView& v, std::vector<Finding>& out);
// framework-library-shadowed, framework-library-shadowed-by-newer or
// framework-library-duplicate for each library the loader takes from elsewhere
// (l3_libraries.cpp). Returns whether an older copy breaks the framework.
bool shadowed_libraries_rule(const FrameworkView& v, std::vector<Finding>& out);
// framework-two-cuda-runtimes (l3_libraries.cpp).
void two_runtimes_rule(const FrameworkView& v, std::vector<Finding>& out);
// The build against this machine's GPUs and driver, plan::fit_build's judgement:
// framework-no-kernels-for-gpu, framework-ptx-jit-unavailable, framework-cuda-beyond-gpu-branch,
// framework-cuda-too-new-for-driver (l3_build.cpp). Returns whether the build cannot run.
bool build_rules(const FrameworkView& v, std::vector<Finding>& out);
// check --deep (l3_deep.cpp): deep-import-failed, deep-gpu-not-seen, deep-matmul-failed,
// deep-library-differs, deep-library-extra, then deep-framework-view or deep-agrees; deep-not-run
// for a framework that could not be asked.
void deep_rule(const FrameworkView& v, std::vector<Finding>& out);
// framework-library-older: an nvidia-* wheel older than the framework pins (l3_build.cpp).
void pins_rule(const FrameworkView& v, std::vector<Finding>& out);

}  // namespace cudoctor::rules::l3
