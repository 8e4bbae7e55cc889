#include "cudoctor/cli/reports.hpp"

#include "cudoctor/cli/gather.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

util::Result<fleet::Digest> read_report_file(const sys::Sys& sys, const std::string& given) {
  const auto path = file_argument(sys, given);
  auto body = sys.read_file(path, k_max_report_bytes);
  if (!body) {
    // The reason alone: the caller names the file as the user gave it.
    const auto& e = body.error();
    return util::error(e.starts_with(path + ": ") ? e.substr(path.size() + 2) : e);
  }
  return fleet::read_report(*body, given);
}

util::Result<std::vector<std::string>> report_files(const sys::Sys& sys, const std::string& given) {
  const auto path = file_argument(sys, given);
  if (sys.stat(path).type != sys::FileType::directory) return std::vector<std::string>{given};
  auto names = sys.list_dir(path);
  if (!names) return util::error(names.error());
  std::vector<std::string> out;
  const std::string dir = given.ends_with('/') ? given : given + "/";
  for (const auto& n : *names)
    if (n.size() > 5 && n.ends_with(".json") && n.front() != '.') out.push_back(dir + n);
  return out;
}

}  // namespace cudoctor::cli
