#pragma once
// CUDA_VISIBLE_DEVICES as the CUDA driver reads it (CUDA C++ Programming Guide, "CUDA
// Environment Variables"): a comma-separated list of GPU indices, GPU UUIDs ("GPU-…", any
// unique leading part) or MIG ids ("MIG-…"), read left to right; the first entry that names no
// device ends the list, and only the devices before it are visible ("0,2,-1,1" shows 0 and 2).
// Pure: judged against the GPUs this machine is known to have.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudoctor::rules {

struct VisibleDevices {
  std::size_t listed = 0;            // entries in the list
  std::optional<std::size_t> shown;  // entries before the first that names no device; nullopt: not decidable here
  std::string stopped_at;            // that entry, "" when none stops the list
  std::string why;                   // "no GPU 5 (2 GPUs)", "not an index or a GPU or MIG id"
};

// gpus: how many GPUs the driver would list (nullopt unknown); uuids: their UUIDs ("GPU-…"),
// empty when unknown.
VisibleDevices read_visible_devices(std::string_view value, std::optional<std::size_t> gpus,
                                    const std::vector<std::string>& uuids);

}  // namespace cudoctor::rules
