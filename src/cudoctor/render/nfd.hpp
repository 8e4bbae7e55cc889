#pragma once
// The report as a node-feature-discovery feature file (NFD's local source reads
// /etc/kubernetes/node-feature-discovery/features.d/*): one `<namespace>/<name>=<value>` per
// line, every value a valid Kubernetes label value, after a `# +expiry-time=` directive so
// that labels of a node whose check stopped running go away (docs/fleet.md).
#include <string>
#include <string_view>

#include "cudoctor/report/report.hpp"

namespace cudoctor::render {

inline constexpr std::string_view k_nfd_default_namespace = "cudoctor.feature.node.kubernetes.io";

struct NfdOptions {
  std::string label_namespace = std::string(k_nfd_default_namespace);
  std::string expires;  // RFC 3339 UTC, "2026-12-03T15:04:05Z"; "" for no expiry line
  std::string tool_version;
  std::string generated;  // when the check ran, for the header comment
};

// ok, broken-layer, break, errors, warnings, problem.<id>, driver, cuda-driver, <framework>-cuda.
std::string nfd_labels(const report::Report& r, const NfdOptions& o);

// "" when nfd-master accepts labels in this namespace by default (a DNS subdomain outside
// kubernetes.io, or feature.node.kubernetes.io / profile.node.kubernetes.io and theirs);
// otherwise why not.
std::string nfd_namespace_problem(std::string_view ns);

// s as a Kubernetes label value: at most 63 characters of [A-Za-z0-9-_.], beginning and
// ending with a letter or digit; other characters become '_'.
std::string nfd_label_value(std::string_view s);

}  // namespace cudoctor::render
