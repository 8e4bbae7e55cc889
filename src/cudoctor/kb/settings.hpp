#pragma once
// The knowledge base's settings (data/settings.json): what each variable, module parameter and
// nvidia-smi setting really does, which values its reader accepts, and which values cost speed,
// each with its source. kb.hpp includes this file.
#include <string>
#include <vector>

namespace cudoctor::kb {

// A value of a setting, and what it means.
struct SettingValue {
  std::string match;    // the value itself, "nonzero", "zero" (as its reader's strtol reads it) or "*"
  std::string verdict;  // "costs-speed", "no-effect", "fine"
  std::string says;     // what it does here, one or two sentences
};

struct SettingRecord {
  std::string name;   // "CUDA_LAUNCH_BLOCKING", "i915.enable_rc6", "nvidia-smi -pl"
  std::string kind;   // "env", "module", "nvidia-smi"
  std::string owner;  // who reads it: "the CUDA driver", "NCCL"
  // How its reader reads the value: int (strtol/strtoll: a word reads as 0), choice (one of
  // accepted, exactly), exact_bool (exactly true or false), text, workspace, alloc_conf.
  std::string grammar;
  std::vector<std::string> accepted;
  // What a value that is no number reads as, for an int whose reader is known to use
  // strtol/strtoll ("0"); "" when how the reader treats one is not documented.
  std::string word_reads_as;
  std::string default_value;
  std::string effect;  // what it really does
  std::vector<SettingValue> values;
  std::string claim;  // a widely copied claim about it that is wrong, "" none
  std::string truth;  // what is true instead
  std::string source;
};

// A name that is set in the wild but that nothing reads.
struct NotRead {
  std::string name;
  bool proven = false;  // the reader's strings were searched; false: only sources searched
  std::string says;
  std::string instead;
  std::string claim;
  std::string source;
};

// An option of PyTorch's CUDA caching allocator (PYTORCH_CUDA_ALLOC_CONF).
struct AllocatorKey {
  std::string key;
  // mb (an integer number of MB, at least min), fraction (strictly between 0 and 1), roundup
  // (a power of 2, or [size:divisions,…,>:divisions]), py_bool (exactly True or False),
  // power2, backend (native or cudaMallocAsync).
  std::string grammar;
  int min = 0;
  bool native_only = false;  // ignored with backend:cudaMallocAsync
  std::string effect;
  std::string cost;
  std::string source;
};

struct Settings {
  std::vector<SettingRecord> records;
  std::vector<NotRead> not_read;
  std::vector<AllocatorKey> allocator_keys;

  const SettingRecord* find(const std::string& name) const;
  const NotRead* find_not_read(const std::string& name) const;
  const AllocatorKey* allocator_key(const std::string& key) const;
};

// Parses settings.json; throws std::runtime_error naming the record and the field.
Settings parse_settings(const std::string& file, const void* json_document);

}  // namespace cudoctor::kb
