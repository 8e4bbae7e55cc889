// L1: the NVIDIA Container Device Interface specifications a container engine reads
// (/etc/cdi and /var/run/cdi, the two directories the CDI specification names). nvidia-ctk
// writes each driver library it mounts as a `hostPath` (YAML block style, or JSON); those
// with a driver version in their name say which driver the spec was generated for.
#include <algorithm>
#include <cctype>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::probe {
namespace {

constexpr const char* k_dirs[] = {"/etc/cdi", "/var/run/cdi"};
constexpr std::size_t k_max_missing = 5;

bool spec_file(std::string_view name) {
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    const std::string_view e(ext);
    if (name.size() > e.size() && name.substr(name.size() - e.size()) == e) return true;
  }
  return false;
}

// The value after `key` at pos: `key: value`, `"key": "value"`; "" when none.
std::string value_after(std::string_view text, std::size_t pos) {
  auto i = text.find(':', pos);
  if (i == std::string_view::npos) return "";
  ++i;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  const bool quoted = i < text.size() && (text[i] == '"' || text[i] == '\'');
  const char quote = quoted ? text[i++] : '\0';
  auto end = i;
  while (end < text.size() && text[end] != '\n' && text[end] != '\r' &&
         (quoted ? text[end] != quote : (text[end] != ' ' && text[end] != ',' && text[end] != '}')))
    ++end;
  return std::string(text.substr(i, end - i));
}

// Every value of a key, wherever it stands: one per line in YAML, many on a line in JSON.
std::vector<std::string> values_of(std::string_view text, std::string_view key) {
  std::vector<std::string> out;
  for (auto pos = text.find(key); pos != std::string_view::npos; pos = text.find(key, pos + key.size())) {
    const auto after = pos + key.size();
    const bool whole = after < text.size() && (text[after] == ':' || text[after] == '"' || text[after] == '\'');
    const bool starts = pos == 0 || !(std::isalnum(static_cast<unsigned char>(text[pos - 1])) || text[pos - 1] == '_');
    if (whole && starts) out.push_back(value_after(text, after));
  }
  return out;
}

// "535.104.05" of /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05 (a driver library: a
// libcuda or libnvidia-* or *_nvidia file), "" for any other path.
std::string driver_version_of(std::string_view path) {
  const auto slash = path.rfind('/');
  const auto name = path.substr(slash == std::string_view::npos ? 0 : slash + 1);
  const bool driver_lib = name.rfind("libcuda.so.", 0) == 0 || name.rfind("libnvidia-", 0) == 0 ||
                          name.find("_nvidia.so.") != std::string_view::npos;
  const auto so = name.find(".so.");
  if (!driver_lib || so == std::string_view::npos) return "";
  const auto v = name.substr(so + 4);
  const auto parsed = util::Version::parse(v);
  return parsed && parsed->parts.size() >= 2 && parsed->major() >= 100 ? std::string(v) : "";
}

}  // namespace

void probe_cdi(Context& ctx, snapshot::DriverFacts& driver) {
  for (const char* dir : k_dirs) {
    auto names = ctx.list_optional(dir);
    if (!names) continue;
    std::sort(names->begin(), names->end());
    for (const auto& name : *names) {
      if (!spec_file(name)) continue;
      const auto path = std::string(dir) + "/" + name;
      const auto text = ctx.read_optional(path, 4 << 20);
      if (!text) continue;
      snapshot::CdiSpec spec;
      spec.path = path;
      const auto kinds = values_of(*text, "kind");
      spec.kind = kinds.empty() ? "" : kinds.front();
      if (spec.kind.rfind("nvidia.com/", 0) != 0) continue;
      std::vector<std::string> seen;
      for (const auto& host : values_of(*text, "hostPath")) {
        const auto v = driver_version_of(host);
        if (v.empty() || std::find(seen.begin(), seen.end(), host) != seen.end()) continue;
        seen.push_back(host);
        ++spec.libraries;
        if (std::find(spec.driver_versions.begin(), spec.driver_versions.end(), v) == spec.driver_versions.end())
          spec.driver_versions.push_back(v);
        if (spec.missing.size() < k_max_missing && ctx.sys().stat(host).type == sys::FileType::missing)
          spec.missing.push_back(host);
      }
      driver.cdi_specs.push_back(std::move(spec));
    }
  }
}

}  // namespace cudoctor::probe
