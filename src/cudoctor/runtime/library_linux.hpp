#pragma once
// A vendor library opened in a probe child with dlopen. Symbols are looked up by name and
// typed by the caller after NVIDIA's headers (cuda.h, cuda_runtime_api.h, cublas_api.h,
// nvml.h). Only ever used inside run_in_child; nothing is dlclose'd (the child _exits).
#include <dlfcn.h>

#include <string>

#include "cudoctor/runtime/child.hpp"

namespace cudoctor::runtime {

class Library {
 public:
  // dlopen(path, flags); false, with error() set, when it fails. The call is noted first:
  // the library's constructors run inside dlopen and may hang or crash there.
  bool open(const std::string& path, int flags) {
    note_call("dlopen (the library's constructors)");
    m_handle = ::dlopen(path.c_str(), flags);
    if (!m_handle) {
      const char* e = ::dlerror();
      m_error = e ? e : "dlopen failed";
    }
    return m_handle != nullptr;
  }
  // The entry point called name as type Fn; nullptr when absent or the library is not open.
  template <typename Fn>
  Fn sym(const char* name) const {
    return m_handle ? reinterpret_cast<Fn>(::dlsym(m_handle, name)) : nullptr;
  }
  // Why open() failed (dlerror's text).
  const std::string& error() const { return m_error; }

 private:
  void* m_handle = nullptr;
  std::string m_error;
};

}  // namespace cudoctor::runtime
