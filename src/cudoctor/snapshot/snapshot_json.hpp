#pragma once
// JSON form of the snapshot: to_json/from_json for every struct (round-trips exactly;
// missing keys read as defaults so older snapshots load).
#include <nlohmann/json.hpp>
#include <optional>

#include "cudoctor/snapshot/snapshot.hpp"
#include "cudoctor/util/result.hpp"

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace cudoctor::snapshot {

// An unknown string reads as unset (the first pair).
NLOHMANN_JSON_SERIALIZE_ENUM(ChildStatus, {
                                              {ChildStatus::unset, ""},
                                              {ChildStatus::ok, "ok"},
                                              {ChildStatus::crashed, "crashed"},
                                              {ChildStatus::timeout, "timeout"},
                                              {ChildStatus::exited, "exited"},
                                              {ChildStatus::bad_reply, "bad_reply"},
                                              {ChildStatus::failed_to_start, "failed_to_start"},
                                              {ChildStatus::not_run, "not_run"},
                                              {ChildStatus::load_failed, "load_failed"},
                                              {ChildStatus::child_error, "child_error"},
                                          })

NLOHMANN_JSON_SERIALIZE_ENUM(NodeType, {{NodeType::missing, "missing"},
                                        {NodeType::file, "file"},
                                        {NodeType::directory, "directory"},
                                        {NodeType::symlink, "symlink"},
                                        {NodeType::char_device, "char_device"},
                                        {NodeType::block_device, "block_device"},
                                        {NodeType::fifo, "fifo"},
                                        {NodeType::socket, "socket"},
                                        {NodeType::other, "other"}})

// other first: a phrase not in the table reads as other (its text kept in detail, below).
NLOHMANN_JSON_SERIALIZE_ENUM(ToolkitFinder,
                             {{ToolkitFinder::other, ""},
                              {ToolkitFinder::usr_local_dir, "/usr/local/cuda-* directory"},
                              {ToolkitFinder::usr_local_cuda, "/usr/local/cuda"},
                              {ToolkitFinder::opt_cuda, "/opt/cuda"},
                              {ToolkitFinder::distribution_package, "distribution package (nvidia-cuda-toolkit)"},
                              {ToolkitFinder::cuda_home, "CUDA_HOME"},
                              {ToolkitFinder::cuda_path, "CUDA_PATH"},
                              {ToolkitFinder::cuda_root, "CUDA_ROOT"},
                              {ToolkitFinder::nvcc_on_path, "nvcc on PATH"},
                              {ToolkitFinder::nvcc_later_on_path, "nvcc later on PATH"},
                              {ToolkitFinder::conda_environment, "conda environment"}})

void to_json(nlohmann::json& j, const ToolkitFoundBy& v);
void from_json(const nlohmann::json& j, ToolkitFoundBy& v);
void to_json(nlohmann::json& j, const Unreadable& v);
void from_json(const nlohmann::json& j, Unreadable& v);
void to_json(nlohmann::json& j, const Detected& v);
void from_json(const nlohmann::json& j, Detected& v);
void to_json(nlohmann::json& j, const Tool& v);
void from_json(const nlohmann::json& j, Tool& v);
void to_json(nlohmann::json& j, const Package& v);
void from_json(const nlohmann::json& j, Package& v);
void to_json(nlohmann::json& j, const EnvVar& v);
void from_json(const nlohmann::json& j, EnvVar& v);
void to_json(nlohmann::json& j, const HostFacts& v);
void from_json(const nlohmann::json& j, HostFacts& v);
void to_json(nlohmann::json& j, const PciDevice& v);
void from_json(const nlohmann::json& j, PciDevice& v);
void to_json(nlohmann::json& j, const ModuleState& v);
void from_json(const nlohmann::json& j, ModuleState& v);
void to_json(nlohmann::json& j, const Blacklist& v);
void from_json(const nlohmann::json& j, Blacklist& v);
void to_json(nlohmann::json& j, const KernelModule& v);
void from_json(const nlohmann::json& j, KernelModule& v);
void to_json(nlohmann::json& j, const DeviceNode& v);
void from_json(const nlohmann::json& j, DeviceNode& v);
void to_json(nlohmann::json& j, const LibraryCandidate& v);
void from_json(const nlohmann::json& j, LibraryCandidate& v);
void to_json(nlohmann::json& j, const ForwardCompat& v);
void from_json(const nlohmann::json& j, ForwardCompat& v);
void to_json(nlohmann::json& j, const DriverLibrary& v);
void from_json(const nlohmann::json& j, DriverLibrary& v);
void to_json(nlohmann::json& j, const ChildOutcome& v);
void from_json(const nlohmann::json& j, ChildOutcome& v);
void to_json(nlohmann::json& j, const NvmlGpu& v);
void from_json(const nlohmann::json& j, NvmlGpu& v);
void to_json(nlohmann::json& j, const NvmlFacts& v);
void from_json(const nlohmann::json& j, NvmlFacts& v);
void to_json(nlohmann::json& j, const DriverFacts& v);
void from_json(const nlohmann::json& j, DriverFacts& v);
void to_json(nlohmann::json& j, const Gpu& v);
void from_json(const nlohmann::json& j, Gpu& v);
void to_json(nlohmann::json& j, const VersionWitness& v);
void from_json(const nlohmann::json& j, VersionWitness& v);
void to_json(nlohmann::json& j, const ToolkitComponent& v);
void from_json(const nlohmann::json& j, ToolkitComponent& v);
void to_json(nlohmann::json& j, const Toolkit& v);
void from_json(const nlohmann::json& j, Toolkit& v);
void to_json(nlohmann::json& j, const GlobalSetting& v);
void from_json(const nlohmann::json& j, GlobalSetting& v);
void to_json(nlohmann::json& j, const LoaderPick& v);
void from_json(const nlohmann::json& j, LoaderPick& v);
void to_json(nlohmann::json& j, const ToolkitFacts& v);
void from_json(const nlohmann::json& j, ToolkitFacts& v);
void to_json(nlohmann::json& j, const FrameworkLibrary& v);
void from_json(const nlohmann::json& j, FrameworkLibrary& v);
void to_json(nlohmann::json& j, const Framework& v);
void from_json(const nlohmann::json& j, Framework& v);
void to_json(nlohmann::json& j, const PythonEnv& v);
void from_json(const nlohmann::json& j, PythonEnv& v);
void to_json(nlohmann::json& j, const EnvListCut& v);
void from_json(const nlohmann::json& j, EnvListCut& v);
void to_json(nlohmann::json& j, const PythonFacts& v);
void from_json(const nlohmann::json& j, PythonFacts& v);
void to_json(nlohmann::json& j, const CudaCall& v);
void from_json(const nlohmann::json& j, CudaCall& v);
void to_json(nlohmann::json& j, const CudaDevice& v);
void from_json(const nlohmann::json& j, CudaDevice& v);
void to_json(nlohmann::json& j, const DriverApiFacts& v);
void from_json(const nlohmann::json& j, DriverApiFacts& v);
void to_json(nlohmann::json& j, const CudartFacts& v);
void from_json(const nlohmann::json& j, CudartFacts& v);
void to_json(nlohmann::json& j, const CopyCheck& v);
void from_json(const nlohmann::json& j, CopyCheck& v);
void to_json(nlohmann::json& j, const GemmCheck& v);
void from_json(const nlohmann::json& j, GemmCheck& v);
void to_json(nlohmann::json& j, const ComputeCheck& v);
void from_json(const nlohmann::json& j, ComputeCheck& v);
void to_json(nlohmann::json& j, const RuntimeFacts& v);
void from_json(const nlohmann::json& j, RuntimeFacts& v);
void to_json(nlohmann::json& j, const DeepLibrary& v);
void from_json(const nlohmann::json& j, DeepLibrary& v);
void to_json(nlohmann::json& j, const DeepView& v);
void from_json(const nlohmann::json& j, DeepView& v);
void to_json(nlohmann::json& j, const Setting& v);
void from_json(const nlohmann::json& j, Setting& v);
void to_json(nlohmann::json& j, const ModuleParam& v);
void from_json(const nlohmann::json& j, ModuleParam& v);
void to_json(nlohmann::json& j, const LibraryWords& v);
void from_json(const nlohmann::json& j, LibraryWords& v);
void to_json(nlohmann::json& j, const SettingsFacts& v);
void from_json(const nlohmann::json& j, SettingsFacts& v);
void to_json(nlohmann::json& j, const Snapshot& v);
void from_json(const nlohmann::json& j, Snapshot& v);

// Parses a snapshot or report JSON document; a user-grade error for anything else.
util::Result<Snapshot> snapshot_from_json_text(const std::string& text);

}  // namespace cudoctor::snapshot
