#pragma once
// Log signatures: what programs print when the chain breaks, as knowledge-base data
// (data/log_signatures.json, a source URL per record). Each signature is a pattern, the program
// that prints it, what it captures, and the causes it may have, each a catalog finding id.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cudoctor/util/result.hpp"

namespace cudoctor::explain {

// What a capture holds, which decides the arithmetic done with it.
enum class CaptureKind {
  driver_api,  // cudaDriverGetVersion's integer: 11040 is CUDA 11.4
  cuda_version,
  driver_version,
  soname,
  sm,  // 86 of sm_86
  compute_capability,
  xid,
  pci_bus,
  gpu_name,
  framework_version,
  symbol,
  library,
  path,
  code,  // a numeric error code
  text,
};
std::string_view to_string(CaptureKind k);

struct Cause {
  std::string id;       // a catalog finding id
  std::string because;  // why this cause gives this message
  std::string confirm;  // one read-only command that tells whether it is this cause
  std::string fix;
  // The cause applies only when each named capture has one of the values; empty: always.
  std::map<std::string, std::vector<std::string>> when;
};

struct Capture {
  std::string name;
  CaptureKind kind = CaptureKind::text;
};

struct Signature {
  std::string id;
  std::string pattern;  // RE2, searched in one cleaned line
  std::string emitter;
  std::string era;
  std::string source;
  int priority = 50;  // 0–100: how decisive the line is; the highest wins, then the earliest line
  std::vector<Capture> captures;
  std::vector<Cause> causes;  // most likely first
};

// A fact the log states about its machine, whatever failed: the nvidia-smi header's driver,
// a framework's version string, an image tag.
struct FactPattern {
  std::string id;
  std::string pattern;
  std::vector<Capture> captures;
  std::string source;
};

struct Xid {
  int number = 0;
  std::string mnemonic;  // nverror.h's name
  std::string kind;      // application | memory | bus | nvlink | firmware | other
  std::string action;    // what NVIDIA's catalog says to do
  std::string source;
};

struct Library {
  std::vector<Signature> signatures;
  std::vector<FactPattern> facts;
  // cause id -> finding ids whose presence on the machine refutes it
  std::map<std::string, std::vector<std::string>> refuted_by;
  std::map<int, Xid> xids;
  std::vector<std::string> program_faults;  // cause ids that are the program's fault, not the environment's
  // CUDA libraries' soname majors and the CUDA major each belongs to: libcufft.so.10 is CUDA 11's.
  struct Soname {
    std::string library;  // "libcufft"
    int soname_major = 0;
    int cuda_major = 0;
  };
  std::vector<Soname> sonames;
};

// Parses log_signatures.json. An error names the record: a pattern RE2 rejects, a capture kind
// or cause id not known, a record without a source.
util::Result<Library> parse_library(std::string_view json_text);

// The library compiled into the binary.
const Library& builtin_library();

}  // namespace cudoctor::explain
