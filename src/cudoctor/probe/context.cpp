#include "cudoctor/probe/context.hpp"

#include <algorithm>

namespace cudoctor::probe {
namespace {

// Sys errors read "<path>: <reason>"; the snapshot keeps the two apart.
std::string reason_of(const std::string& path, std::string error) {
  if (error.starts_with(path + ": ")) error = error.substr(path.size() + 2);
  return error;
}

// A path that is simply not there (and not hidden behind an error) is no fact source.
bool absent(const sys::Sys& sys, const std::string& path) {
  const auto st = sys.stat(path);
  return st.type == sys::FileType::missing && st.error.empty();
}

}  // namespace

void Context::unreadable(std::string path, std::string reason) {
  if (is_unreadable(path)) return;
  m_unreadable.push_back({std::move(path), std::move(reason)});
}

void Context::unreadable_error(const std::string& path, const std::string& error) {
  unreadable(path, reason_of(path, error));
}

bool Context::is_unreadable(const std::string& path) const {
  return std::any_of(m_unreadable.begin(), m_unreadable.end(), [&](const auto& u) { return u.path == path; });
}

std::optional<std::string> Context::read_optional(const std::string& path, std::size_t max_bytes) {
  if (absent(m_sys, path)) return std::nullopt;
  auto r = m_sys.read_file(path, max_bytes);
  if (!r) {
    unreadable_error(path, r.error());
    return std::nullopt;
  }
  return std::move(r).value();
}

std::optional<std::vector<std::string>> Context::list_optional(const std::string& path) {
  if (const auto it = m_listings.find(path); it != m_listings.end()) return it->second;
  std::optional<std::vector<std::string>> names;
  if (!absent(m_sys, path)) {
    if (auto r = m_sys.list_dir(path))
      names = std::move(r).value();
    else
      unreadable_error(path, r.error());
  }
  return m_listings.emplace(path, std::move(names)).first->second;
}

std::shared_ptr<const sys::Blob> Context::map_optional(const std::string& path) {
  if (absent(m_sys, path)) return nullptr;
  auto r = m_sys.map_file(path);
  if (!r || !*r) {
    unreadable(path, r ? std::string("could not be mapped") : reason_of(path, r.error()));
    return nullptr;
  }
  return std::move(r).value();
}

std::unique_ptr<const sys::Reader> Context::open_optional(const std::string& path) {
  if (absent(m_sys, path)) return nullptr;
  auto r = m_sys.open_reader(path);
  if (!r) {
    unreadable_error(path, r.error());
    return nullptr;
  }
  return std::move(r).value();
}

const RunTimeOpens& Context::run_time_opens() const {
  static const RunTimeOpens none;
  return m_options.run_time_opens.valid() ? m_options.run_time_opens.get() : none;
}

ld::Resolver& Context::resolver() {
  if (!m_resolver)
    m_resolver =
        std::make_unique<ld::Resolver>(m_sys, ld::discover_config(m_sys, m_sys.env("LD_LIBRARY_PATH").value_or("")));
  return *m_resolver;
}

std::optional<std::string> Context::read_quiet(const std::string& path, std::size_t max_bytes) {
  auto r = m_sys.read_file(path, max_bytes);
  if (!r) return std::nullopt;
  return std::move(r).value();
}

std::optional<std::vector<std::string>> Context::list_quiet(const std::string& path) {
  auto r = m_sys.list_dir(path);
  if (!r) return std::nullopt;
  return std::move(r).value();
}

}  // namespace cudoctor::probe
