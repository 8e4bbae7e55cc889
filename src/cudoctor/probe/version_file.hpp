#pragma once
// The assignments of a framework's generated version file, read without executing it:
// torch/version.py (`__version__ = '2.5.1'`, `cuda: Optional[str] = '12.4'`), jaxlib's
// version.py, TensorFlow's build_info.py (`build_info['cuda_version'] = '12.3'`).
#include <map>
#include <string>
#include <string_view>

namespace cudoctor::probe {

// name -> value, the last assignment of a name kept. A line holds one assignment: the first
// `['name'] = value` in it, else a `name = value`, `name: type = value` or `'name': value` at its
// start. A value is a quoted string (its text), None, True, False or a run of digits and dots.
std::map<std::string, std::string> version_file_assignments(std::string_view text);

}  // namespace cudoctor::probe
