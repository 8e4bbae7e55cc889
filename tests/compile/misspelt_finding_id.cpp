// Must not compile: a finding id that is not in the catalog. tests/compile/CMakeLists.txt
// compiles this file and expects the catalog's own message; with CUDOCTOR_GOOD_ID defined
// it must compile, so the failure is the id and nothing else.
#include "cudoctor/rules/catalog.hpp"

cudoctor::rules::Finding f() {
#ifdef CUDOCTOR_GOOD_ID
  return cudoctor::rules::make_finding("nvml-error");
#else
  return cudoctor::rules::make_finding("nvml-eror");
#endif
}
