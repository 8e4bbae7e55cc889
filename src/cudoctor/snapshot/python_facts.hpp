#pragma once
// The snapshot's L3 facts: Python environments, their frameworks and the CUDA libraries
// those load (snapshot.hpp includes this file; include that one).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudoctor::snapshot {

// L3: a CUDA library in a framework's dependency tree, as the loader resolves it.
struct FrameworkLibrary {
  std::string soname;   // "libcublas.so.12"
  std::string path;     // where the loader takes it from, "" when not found
  std::string rule;     // "DT_RUNPATH", "LD_LIBRARY_PATH", "ld.so.cache", …
  std::string version;  // from the real file name, "" unknown
  std::string bundled;  // the copy the framework ships (site-packages/nvidia/*/lib, its own lib dir), "" none
  bool operator==(const FrameworkLibrary&) const = default;
};

// A package installed with a framework that must agree with it: JAX's jax, and its CUDA plugin
// wheels (jax_cuda12_plugin, jax_cuda12_pjrt), beside jaxlib.
struct PackageVersion {
  std::string name;     // "jax", "jax_cuda12_plugin"
  std::string version;  // as its version file or dist-info gives it: "0.4.31"
  std::string source;   // "jax/version.py", "jax_cuda12_plugin-0.4.31.dist-info"
  bool operator==(const PackageVersion&) const = default;
};

// A CUDA library of the static prediction beside the file the framework's process mapped.
struct DeepLibrary {
  std::string soname;          // "libcudart.so.12"
  std::string predicted;       // FrameworkLibrary::path, "" when the prediction found none
  std::string predicted_real;  // that path with its links followed, "" when it has none
  std::string mapped;          // the file of this library the process mapped, "" none
  bool operator==(const DeepLibrary&) const = default;
};

// What a framework said about itself when its interpreter imported it (check --deep), in a
// process of its own: how the process ended, what the framework answered, what it mapped.
struct DeepView {
  std::string status;  // "ok", "crashed", "timeout", "exited", "no_reply", "failed_to_start", "skipped"
  int signal = 0;      // crashed: the signal
  int exit_code = 0;   // exited: the code
  double seconds = 0;
  std::string message;    // why it was skipped, or what went wrong
  std::string last_step;  // the step it was in when it did not finish: "import torch", "matmul"
  std::string run_as;     // the user it ran as when not ourselves (root runs a user's tree as that user)
  std::string stderr_tail;
  bool imported = false;
  std::string error;  // the exception the import or a query raised, "" none
  std::string version;
  std::string cuda;    // the CUDA it says it was built with, "" none
  int available = -1;  // torch.cuda.is_available() and the like: 1, 0, -1 not asked
  int device_count = -1;
  std::vector<std::string> devices;    // device names
  std::vector<std::string> arch_list;  // torch.cuda.get_arch_list()
  std::string matmul;                  // "ok", "wrong", the error, "" not run
  std::string ld_preload;              // LD_PRELOAD in the process
  std::vector<std::string> preloaded;  // GPU frameworks already imported before it (sitecustomize, .pth)
  std::vector<std::string> mapped;     // every shared object the process mapped (/proc/self/maps)
  std::vector<DeepLibrary> libraries;  // the prediction's CUDA libraries beside what was mapped
  std::vector<std::string> extra;      // CUDA libraries mapped that the prediction does not have
  bool operator==(const DeepView&) const = default;
};

// A library opened with dlopen at run time: what opens it, and where the loader would find it.
struct OpenedLibrary {
  std::string soname;
  std::string opener;  // logical path of the library that opens it (the GPU library, libcudnn.so.9, …)
  std::string path;    // where dlopen from the opener finds it, "" nowhere
  std::string rule;    // how (ld's rule name)
  bool operator==(const OpenedLibrary&) const = default;
};

struct Framework {
  std::string name;     // torch, tensorflow, jax, cupy, onnxruntime
  std::string version;  // "2.5.1+cu124"
  std::string cuda;     // the CUDA it was built for, "" for a CPU-only build (or cuda_unknown)
  std::string hip;      // ROCm build
  std::string cudnn;
  std::string location;     // logical path of the package
  std::string source;       // where the facts come from: "torch/version.py"
  std::string gpu_library;  // the library whose tree was resolved
  // A GPU build (it has a gpu_library) whose CUDA neither a file states nor its libraries'
  // sonames show (onnxruntime_gpu names no version): cuda is "" but it is no CPU-only build.
  bool cuda_unknown = false;
  std::vector<FrameworkLibrary> libraries;
  std::vector<std::string> missing;  // sonames not found (libcuda.so.1 excepted)
  // Sonames it opens at run time rather than through DT_NEEDED (TensorFlow's dso_loader,
  // cuDNN's sub-libraries), resolved as dlopen from their opener would; each is in libraries or
  // missing, and in opened with its opener.
  std::vector<std::string> dlopened;
  std::vector<OpenedLibrary> opened;
  std::vector<std::string> missing_versions;  // "GLIBCXX_3.4.32 (in /usr/lib/…/libstdc++.so.6)"
  std::vector<std::string> sm_archs;          // in its own libraries' fatbins
  std::vector<std::string> ptx_archs;
  std::vector<std::string> requires_nvidia;  // Requires-Dist: "nvidia-cudnn-cu12==9.1.0.70"
  std::string error;                         // the GPU library could not be read
  // Who installed it: the dist-info's INSTALLER ("pip", "uv", "conda"), else "conda" when the
  // environment's conda-meta names the package, else "" unknown.
  std::string installer;
  // Found only in the base interpreter's (or the user's) site-packages, which a venv made
  // with include-system-site-packages = true imports after its own.
  bool inherited = false;
  // JAX: jax and the CUDA plugin wheels next to jaxlib (version is jaxlib's), and the oldest
  // jaxlib jax accepts (jax/version.py's _minimum_jaxlib_version), "" unknown.
  std::vector<PackageVersion> companions;
  std::string minimum_jaxlib;
  std::optional<DeepView> deep;  // check --deep only
  bool operator==(const Framework&) const = default;
};

struct PythonEnv {
  std::string prefix;       // logical: /usr, /home/a/venv, /opt/conda/envs/x
  std::string interpreter;  // bin/python3 (logical), "" unknown
  std::string version;      // "3.11"
  std::string kind;         // system, venv, conda, pyenv, given
  std::vector<std::string> found_by;
  std::vector<std::string> site_packages;  // in import order
  std::vector<Framework> frameworks;
  std::vector<std::pair<std::string, std::string>> nvidia_packages;  // dist-info name -> version
  // Packages that need the unversioned libcuda.so: triton (its launcher is linked with -lcuda),
  // bitsandbytes while it has cuda_setup/main.py (dlopen("libcuda.so")); source names the file.
  std::vector<PackageVersion> libcuda_users;
  // pyvenv.cfg include-system-site-packages = true: site_packages then ends with the base
  // environment's directories (site.py adds them after the venv's own).
  bool system_site_packages = false;
  std::string base_prefix;  // a venv's base: the parent of pyvenv.cfg `home` (the base's bin), "" otherwise
  bool conda_meta = false;  // <prefix>/conda-meta exists: a conda environment, whatever kind says
  bool operator==(const PythonEnv&) const = default;
};

// A list of candidate environments longer than the probe inspects: only its first entries
// (in the list's order) were looked at.
struct EnvListCut {
  std::string source;           // logical path: "/opt/conda/envs", "/root/.conda/environments.txt"
  std::uint64_t entries = 0;    // entries the list holds
  std::uint64_t inspected = 0;  // how many of them were inspected
  bool operator==(const EnvListCut&) const = default;
};

struct PythonFacts {
  std::string path_python;      // the python3 (or python) first on PATH, logical
  std::string path_python_env;  // the prefix of its environment
  std::vector<PythonEnv> envs;
  std::vector<EnvListCut> lists_cut;  // lists of environments not inspected to the end
  bool operator==(const PythonFacts&) const = default;
};

}  // namespace cudoctor::snapshot
