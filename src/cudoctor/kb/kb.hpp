#pragma once
// The knowledge base: facts from NVIDIA's and the frameworks' documents, each with its
// source URL, kept as data (data/*.json, compiled in; --kb DIR overrides) and queried by the
// rules and by `cudoctor plan`.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cudoctor/compat/binary.hpp"
#include "cudoctor/kb/settings.hpp"
#include "cudoctor/util/result.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::kb {

struct ReturnCode {
  std::string api;  // "nvml", "runtime", "driver"
  int code = 0;
  std::string name;     // "NVML_ERROR_DRIVER_NOT_LOADED"
  std::string meaning;  // what it means, after NVIDIA's header comments
  std::string message;  // the text cudaGetErrorString / cuGetErrorString / nvmlErrorString gives, "" unknown
  std::vector<std::string> causes;  // every usual cause on Linux, each told apart; empty: nothing beyond the meaning
  std::string source;               // URL the name and meaning come from
  std::string status;               // "" verified, "unverified"
};

// " " and the causes as one sentence each, for a finding's detail; "" when none.
std::string causes_text(const ReturnCode& e);

struct ToolkitRelease {
  util::Version cuda;   // 12.2
  std::string release;  // "CUDA 12.2 Update 2"
  // The minimum Linux driver. When NVIDIA's exact figure is not established, the first version
  // of the branch known to support the release (min_driver_exact false): "615".
  util::Version min_driver_linux;
  bool min_driver_exact = true;
  std::string min_driver_windows;  // "" when NVIDIA lists none
  std::string status;              // "" primary source, "secondary" (see kb::k_statuses)
  std::string note;
  std::string source;
};
// The minimum driver as a reader should see it: "610.43.02", or "R615 (exact minimum not established)".
std::string min_driver_text(const ToolkitRelease& t);

struct CudaMajor {
  int major = 0;
  util::Version minor_compat_floor;  // the driver from which any X.y runtime runs
  std::string source;
};

struct DriverBranch {
  int branch = 0;
  util::Version max_cuda;
  std::string status;
  std::string kind;  // "New Feature Branch", "Production Branch", "Long Term Support Branch", "" unknown
  std::string note;
  std::string source;
};

struct GpuModel {
  std::uint16_t pci_id = 0;
  std::string name;  // pci.ids name, "AD107M [GeForce RTX 4060 Max-Q / Mobile]"
  std::string architecture;
  util::Version cc;
  std::string status;
  std::string source;
  std::string brand;  // one of gpus.json's brands: "geforce", "datacenter", …
};

// A product line (gpus.json "brands"): what decides whether forward compatibility works.
struct GpuBrand {
  std::string brand;                   // "geforce"
  std::vector<std::string> words;      // a name holding one of these is of this brand ("GeForce")
  std::optional<bool> forward_compat;  // cuda-compat works; nullopt: only on some boards
  std::string note;
  std::string source;
};

// A PCI Express generation (pcie.json).
struct PcieGeneration {
  int generation = 0;
  double gt_per_s = 0;       // transfer rate per lane
  std::string encoding;      // "128b/130b"
  double lane_gb_per_s = 0;  // what one lane carries per direction after the line coding
  std::string source;
};

// Libraries opened with dlopen at run time, not through DT_NEEDED (runtime_libraries.json):
// by a framework's GPU library (framework set, opener empty) for a build of one CUDA major, or
// by a library itself (opener set: cuDNN opens its sub-libraries).
struct RuntimeLibrary {
  std::string soname;      // "libcudnn.so.{cudnn}": {cudnn} is the build's cuDNN major
  std::string needed_for;  // what fails without it while the GPU still works; "" the GPU is not used
};
// A CUDA library family (runtime_libraries.json "components"): its sonames' stem, the name
// NVIDIA gives it and the PyPI wheel that ships it.
struct CudaComponent {
  std::string stem;   // "libcublasLt": a soname that starts so (the longest stem wins)
  std::string name;   // "cuBLASLt"
  std::string wheel;  // the wheel's name up to its CUDA major: "nvidia-cublas-cu" (nvidia-cublas-cu12)
  std::string source;
};
struct RuntimeOpens {
  std::string framework;  // "tensorflow", "torch", "jax"; "" for a library's own
  int cuda = 0;           // the build's CUDA major; 0 any
  std::string opener;     // soname of the library that opens them ("libcudnn.so.9")
  // How the opener looks for them is not documented: one in the opener's own directory counts
  // as found (cuDNN's sub-libraries), else they are searched as dlopen from it.
  bool beside_opener = false;
  std::vector<RuntimeLibrary> libraries;
  std::string note;
  std::string source;
};

struct ArchCc {
  util::Version cc;
  util::Version first_cuda;
  std::optional<util::Version> last_cuda;  // nullopt: still supported
  std::string status;
};

struct Architecture {
  std::string name;
  std::vector<ArchCc> ccs;
  std::optional<int> last_driver_branch;  // a legacy branch is the newest that runs it
  std::vector<std::string> sources;
};

struct FrameworkVariant {
  util::Version cuda;
  std::optional<std::vector<util::Version>> archs;  // cubins; nullopt: not published
  std::optional<util::Version> ptx;                 // PTX target, if the build carries one
  std::optional<util::Version> min_cc;              // a published minimum instead of a list
  std::string install;
  std::string arch_status;  // "unverified" when the arch list is not from the release itself
  // For a build that compiles its kernels with the CUDA it finds at run time (CuPy), the newest
  // CUDA it accepts: what can be compiled for a GPU is bounded by that one, not by `cuda`.
  std::optional<util::Version> cuda_max;
};

// A record's status: "" (released, from primary sources), "secondary" (released, on secondary
// sources only), "unverified" (not checked against any source), "planned" (announced, not
// released), "withdrawn" (pulled after release). Anything else is a load error.
inline constexpr const char* k_statuses[] = {"", "secondary", "unverified", "planned", "withdrawn"};

struct FrameworkRelease {
  std::string version;
  std::vector<FrameworkVariant> variants;  // newest CUDA first
  std::string cudnn;
  std::string note;
  std::string status;
  std::string date;  // release date (planned: the announced one), "" unknown
  // The last minor release this record stands for ("1.26" for onnxruntime 1.19–1.26); "" the
  // version alone. open: it also stands for every later release (the newest line of a package).
  std::string last;
  bool open = false;
  std::vector<std::string> sources;
  std::vector<std::string> python;  // CPython minor versions with published wheels, oldest first; empty = unknown
};

// A release record's version as major.minor ("2.5", "1.19"), nullopt for records that name a
// package line ("cuda13", "cupy-cuda12x").
std::optional<util::Version> release_minor(const std::string& version);

// Whether a release may be recommended: released (or on secondary sources), not planned or withdrawn.
bool recommendable(const FrameworkRelease& r);

// Whether the release publishes wheels for this Python (its major.minor; the patch is ignored).
// nullopt when the knowledge base does not know the release's Python versions.
std::optional<bool> supports_python(const FrameworkRelease& release, const util::Version& python);

struct Framework {
  std::string name;                        // "torch"
  std::string display;                     // "PyTorch"
  std::vector<FrameworkRelease> releases;  // newest first
};

// How a driver stands to a CUDA runtime version.
enum class DriverFit { native, minor_compat, too_old };

class KnowledgeBase {
 public:
  // Loads the files compiled into the binary; an error names the file and the record.
  static util::Result<KnowledgeBase> load_embedded();
  // Loads (file name, JSON text) pairs: every known file must be present.
  static util::Result<KnowledgeBase> load(const std::vector<std::pair<std::string, std::string>>& files);
  // The embedded files, each replaced by DIR/<name> where read(DIR/<name>) gives a text
  // (nullopt: no such file, keep the embedded one; an error: the message to report).
  using FileReader = std::function<util::Result<std::optional<std::string>>(const std::string& path)>;
  static util::Result<KnowledgeBase> load_with_overrides(const std::string& dir, const FileReader& read);

  // Consistency of the whole: tables ordered newest first, no missing CUDA minor, unique
  // ids. Empty when all is well; each entry names the file and the record.
  std::vector<std::string> problems() const;

  const std::string& date() const { return m_date; }  // when the data was compiled
  // Every distinct source URL, sorted.
  std::vector<std::string> sources() const;

  // --- lookups
  const ReturnCode* nvml_return_code(int code) const;
  const ReturnCode* cuda_error(const std::string& api, int code) const;  // api: runtime | driver
  const std::map<int, ReturnCode>& nvml_return_codes() const { return m_nvml; }
  const std::vector<ReturnCode>& cuda_errors() const { return m_cuda_errors; }
  const std::vector<ToolkitRelease>& toolkit_releases() const { return m_toolkits; }
  const std::vector<CudaMajor>& cuda_majors() const { return m_majors; }
  const std::vector<DriverBranch>& driver_branches() const { return m_branches; }
  const std::vector<GpuModel>& gpus() const { return m_gpus; }
  const std::vector<Architecture>& architectures() const { return m_archs; }
  const std::vector<Framework>& frameworks() const { return m_frameworks; }
  const Framework* framework(const std::string& name) const;
  const Settings& settings() const { return m_settings; }
  const std::vector<GpuBrand>& brands() const { return m_brands; }
  const std::vector<PcieGeneration>& pcie_generations() const { return m_pcie; }
  const std::vector<RuntimeOpens>& runtime_opens() const { return m_runtime_opens; }
  const std::vector<CudaComponent>& cuda_components() const { return m_components; }

  // --- queries for the rules and the planner
  // The minimum Linux driver of the first release (GA) of CUDA major.minor; nullopt if unknown.
  std::optional<util::Version> min_driver_for_cuda(const util::Version& cuda) const;
  // The first release (GA) record of CUDA major.minor, whose minimum driver that is; nullptr if unknown.
  const ToolkitRelease* first_release_of(const util::Version& cuda) const;
  // The driver floor of minor-version compatibility for a CUDA major (11 and later).
  std::optional<util::Version> minor_compat_floor(int major) const;
  // native: the driver supports the runtime outright; minor_compat: it runs through
  // minor-version compatibility (no JIT of newer PTX); too_old otherwise.
  DriverFit driver_fit(const util::Version& driver, const util::Version& cuda) const;
  // The newest CUDA a driver supports natively: its branch's entry, else the newest
  // toolkit whose minimum driver it meets.
  std::optional<util::Version> max_cuda_for_driver(const util::Version& driver) const;
  // The newest toolkit release whose minimum driver this driver meets.
  const ToolkitRelease* newest_toolkit_for_driver(const util::Version& driver) const;
  // The newest branch in the table; a driver of a later branch is beyond what the knowledge
  // base knows (max_cuda_for_driver then gives a floor, not a limit).
  const DriverBranch* newest_branch() const;
  bool driver_beyond_kb(const util::Version& driver) const;
  // The newest CUDA minor in the toolkit table; a newer one is beyond the knowledge base.
  std::optional<util::Version> newest_cuda() const;
  // The release record an installed version falls under ("2.5.1" -> 2.5; "1.22.0" -> the
  // 1.19–1.26 record), nullptr when none; beyond_kb() when newer than every record.
  const FrameworkRelease* release_of(const Framework& f, const util::Version& installed) const;
  bool release_beyond_kb(const Framework& f, const util::Version& installed) const;
  const GpuModel* gpu_by_pci_id(std::uint16_t id) const;
  // GPUs whose name matches the query ("RTX 4060 Laptop GPU", "H100 SXM"), best first.
  std::vector<const GpuModel*> find_gpus(const std::string& query) const;
  // CUDA errors, then NVML return codes, whose number or name (any case) is the query
  // ("100", "cudaErrorNoDevice", "nvml_error_uninitialized"), or whose message contains it,
  // in any case ("CUDA driver version is insufficient", "driver/library version mismatch").
  std::vector<const ReturnCode*> find_errors(const std::string& query) const;
  const Architecture* architecture_of(const util::Version& cc) const;
  const ArchCc* arch_cc(const util::Version& cc) const;
  // The oldest driver that runs a GPU of this compute capability: that of its first toolkit.
  std::optional<util::Version> min_driver_for_cc(const util::Version& cc) const;
  // The compute capabilities a driver cannot run: newer than the driver (their first
  // toolkit needs more), or moved to a legacy branch older than the driver.
  std::vector<util::Version> ccs_not_run_by(const util::Version& driver) const;
  // Whether toolkit T can compile for cc (first <= T <= last).
  bool toolkit_targets_cc(const util::Version& toolkit, const util::Version& cc) const;
  // Every target toolkit T can emit: a cubin and PTX for each compute capability it compiles for.
  std::vector<compat::Target> toolkit_targets(const util::Version& toolkit) const;
  // Why a driver cannot run a GPU of compute capability cc at all, nullopt when it can.
  struct DriverVsGpu {
    bool too_old = false;  // older than the first driver for cc (need holds it)
    std::optional<util::Version> need;
    std::optional<int> last_branch;  // too new: the legacy branch that is the last for cc
  };
  std::optional<DriverVsGpu> driver_vs_cc(const util::Version& driver, const util::Version& cc) const;
  // A GPU's brand: its record's, else the brand whose word its name holds; nullptr unknown.
  const GpuBrand* brand_of(std::uint16_t pci_id, const std::string& name) const;
  // The generation of a PCIe link: by number (NVML) or by rate as sysfs writes it ("16.0 GT/s
  // PCIe"); nullptr when unknown.
  const PcieGeneration* pcie_generation(int generation) const;
  const PcieGeneration* pcie_generation_at(const std::string& sysfs_speed) const;
  // The record of a soname opened at run time (a "{cudnn}" pattern matches any major); nullptr none.
  const RuntimeLibrary* runtime_library(const std::string& soname) const;
  // The CUDA library family a soname belongs to ("libcublasLt.so.12": cuBLASLt); nullptr none.
  const CudaComponent* component_of(const std::string& soname) const;
  // Distinct CUDA versions (major.minor) of the toolkit table, newest first.
  std::vector<util::Version> cuda_versions() const;

 private:
  void toolkit_problems(std::vector<std::string>& p) const;
  void framework_problems(const Framework& f, std::vector<std::string>& p) const;

  std::map<int, ReturnCode> m_nvml;
  std::vector<ReturnCode> m_cuda_errors;
  std::vector<ToolkitRelease> m_toolkits;
  std::vector<CudaMajor> m_majors;
  std::vector<DriverBranch> m_branches;
  std::vector<GpuModel> m_gpus;
  std::vector<Architecture> m_archs;
  std::vector<Framework> m_frameworks;
  Settings m_settings;
  std::vector<GpuBrand> m_brands;
  std::vector<PcieGeneration> m_pcie;
  std::vector<RuntimeOpens> m_runtime_opens;
  std::vector<CudaComponent> m_components;
  std::string m_date;
};

// The kernels a build carries, as its published arch list gives them: a cubin per listed
// compute capability and its PTX target. nullopt when neither a list nor a minimum is
// published (a published minimum, min_cc, gives no targets: see runs_on).
struct Kernels {
  std::vector<compat::Target> targets;
  std::optional<util::Version> min_cc;  // the framework compiles its own kernels for any cc >= this
};
std::optional<Kernels> kernels(const FrameworkVariant& v);
// Whether those kernels run on cc (compat::runs_on; a published minimum counts as a cubin).
compat::Verdict runs_on(const Kernels& k, const util::Version& cc, bool jit_possible);

// The embedded knowledge base (or the one --kb selected), loaded once.
const KnowledgeBase& builtin();
// Makes builtin() return kb from now on (used by --kb).
void set_builtin(KnowledgeBase kb);

}  // namespace cudoctor::kb
