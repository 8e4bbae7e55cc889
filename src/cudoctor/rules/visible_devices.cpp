#include "cudoctor/rules/visible_devices.hpp"

#include <fmt/format.h>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::rules {

VisibleDevices read_visible_devices(std::string_view value, std::optional<std::size_t> gpus,
                                    const std::vector<std::string>& uuids) {
  VisibleDevices v;
  const auto entries = util::split(value, ',');
  v.listed = value.empty() ? 0 : entries.size();
  std::size_t shown = 0;
  for (const auto e : entries) {
    const bool digits = !e.empty() && e.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits) {
      if (!gpus) return v;  // an index, against a count this machine does not give
      const auto i = util::parse_uint(std::string(e), 10);
      if (!i || *i >= *gpus) {
        v.stopped_at = std::string(e);
        v.why = fmt::format("no GPU {} ({} GPU{})", e, *gpus, *gpus == 1 ? "" : "s");
        break;
      }
    } else if (e.starts_with("GPU-")) {
      if (uuids.empty()) return v;
      bool found = false;
      for (const auto& u : uuids) found = found || (e.size() > 4 && u.starts_with(e));
      if (!found) {
        v.stopped_at = std::string(e);
        v.why = "no GPU has this UUID";
        break;
      }
    } else if (e.starts_with("MIG-")) {
      return v;  // MIG instances are not read here
    } else {
      v.stopped_at = std::string(e);
      v.why = e.empty() ? "an empty entry" : "not an index, a GPU UUID or a MIG id";
      break;
    }
    ++shown;
  }
  v.shown = shown;
  return v;
}

}  // namespace cudoctor::rules
