#include "cudoctor/probe/context.hpp"

namespace cudoctor::probe {

std::optional<std::string> Context::read_optional(const std::string& path, std::size_t max_bytes) {
  const auto st = m_sys.stat(path);
  if (st.type == sys::FileType::missing && st.error.empty()) return std::nullopt;
  auto r = m_sys.read_file(path, max_bytes);
  if (!r) {
    auto reason = r.error();
    if (reason.starts_with(path + ": ")) reason = reason.substr(path.size() + 2);
    unreadable(path, reason);
    return std::nullopt;
  }
  return std::move(r).value();
}

}  // namespace cudoctor::probe
