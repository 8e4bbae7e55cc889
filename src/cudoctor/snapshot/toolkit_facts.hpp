#pragma once
// The snapshot's L2 facts: the CUDA toolkits installed, how each was found and what it holds,
// and the paths and settings that choose between them (snapshot.hpp includes this file).
#include <optional>
#include <string>
#include <vector>

namespace cudoctor::snapshot {

// L2: one piece of evidence for a toolkit's version.
struct VersionWitness {
  std::string source;   // "version.json", "nvcc binary" (its embedded banner), "libcudart.so.12.2.140", "dist-info
                        // nvidia_cuda_runtime-13.0.96"
  std::string version;  // "12.2.140"
  bool operator==(const VersionWitness&) const = default;
};

struct ToolkitComponent {
  std::string name;     // cudart, cublas, cufft, cusparse, cudnn, nccl, nvrtc, nvjitlink
  std::string version;  // "12.2.5.6", "" unknown
  std::string library;  // logical path of the library file
  bool operator==(const ToolkitComponent&) const = default;
};

// How a toolkit root was found. JSON writes the phrase after each value.
enum class ToolkitFinder {
  other,                 // a phrase this version does not know (from another version's snapshot)
  usr_local_dir,         // "/usr/local/cuda-* directory"
  usr_local_cuda,        // "/usr/local/cuda"
  opt_cuda,              // "/opt/cuda"
  distribution_package,  // "distribution package (nvidia-cuda-toolkit)"
  cuda_home,             // "CUDA_HOME"
  cuda_path,             // "CUDA_PATH"
  cuda_root,             // "CUDA_ROOT"
  nvcc_on_path,          // "nvcc on PATH": the first nvcc on PATH, the one that runs
  nvcc_later_on_path,    // "nvcc later on PATH"
  conda_environment,     // "conda environment <prefix>"
};

// One way a toolkit was found; JSON writes it as one phrase ("conda environment /opt/conda").
struct ToolkitFoundBy {
  ToolkitFinder how = ToolkitFinder::other;
  std::string detail;  // conda_environment: the environment's prefix; other: the whole phrase
  bool operator==(const ToolkitFoundBy&) const = default;
};
// The phrase JSON and the report show: "nvcc on PATH", "conda environment /opt/conda".
std::string to_string(const ToolkitFoundBy& f);
std::vector<std::string> to_strings(const std::vector<ToolkitFoundBy>& fs);

// A CUDA toolkit installation.
struct Toolkit {
  std::string root;                      // logical, canonical: /usr/local/cuda-12.2, /usr/lib/nvidia-cuda-toolkit
  std::vector<ToolkitFoundBy> found_by;  // in the order the probe looked
  std::string layout;   // "nvidia" (bin, lib64 under one root), "debian" (nvidia-cuda-toolkit), "conda"
  std::string version;  // the best witness: nvcc's, else the runtime's
  std::vector<VersionWitness> witnesses;
  std::string nvcc;  // logical path, "" when the toolkit has none
  std::string bin_dir;
  std::string lib_dir;
  std::vector<ToolkitComponent> components;
  std::vector<std::string> nvcc_archs;  // unused since nvcc is no longer run (kept for the schema)
  std::vector<std::string> missing;     // parts expected but absent: "bin/nvcc", "libcudart"
  bool operator==(const Toolkit&) const = default;
};

// A line of a global shell or loader configuration file that sets CUDA paths.
struct GlobalSetting {
  std::string file;
  int line = 0;
  std::string text;
  bool operator==(const GlobalSetting&) const = default;
};

struct LoaderPick {
  std::string soname;  // "libcudart.so.12"
  std::string path;    // "" when the loader finds none
  std::string rule;    // "ld.so.cache", "LD_LIBRARY_PATH", …
  bool operator==(const LoaderPick&) const = default;
};

struct ToolkitFacts {
  std::vector<Toolkit> toolkits;
  std::string cuda_link_target;    // /usr/local/cuda -> as written, "" when absent
  std::string cuda_link_resolved;  // canonical, "" when dangling or absent
  std::string path_nvcc;           // the first nvcc on PATH (logical), "" none
  std::string path_nvcc_real;
  std::optional<std::string> cuda_home, cuda_path, cuda_root;  // environment
  std::vector<std::string> path;                               // PATH entries
  std::vector<std::string> ld_library_path;                    // LD_LIBRARY_PATH entries
  std::vector<std::string> ld_so_conf_dirs;                    // directories /etc/ld.so.conf(.d) names, with the file
  std::vector<GlobalSetting> global_settings;
  std::vector<LoaderPick> cudart_picks;  // libcudart.so.<major> for each toolkit major, as the loader finds it
  bool operator==(const ToolkitFacts&) const = default;
};

}  // namespace cudoctor::snapshot
