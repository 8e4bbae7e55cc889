#include "cudoctor/runtime/reply_frame.hpp"

#include <algorithm>
#include <cstdlib>

namespace cudoctor::runtime {

std::string framed(const std::string& payload) {
  return std::to_string(payload.size()) + "\n" + payload;
}

Frame frame_state(const std::string& data, std::string* payload) {
  const auto nl = data.find('\n');
  if (nl == std::string::npos) return data.size() > 20 ? Frame::malformed : Frame::partial;
  if (nl == 0 || nl > 20 ||
      !std::all_of(data.begin(), data.begin() + static_cast<long>(nl), [](char c) { return c >= '0' && c <= '9'; }))
    return Frame::malformed;
  const auto len = std::strtoull(data.substr(0, nl).c_str(), nullptr, 10);
  const auto have = data.size() - nl - 1;
  if (have < len) return Frame::partial;
  if (have > len) return Frame::malformed;  // something else wrote into the pipe too
  if (payload) *payload = data.substr(nl + 1);
  return Frame::complete;
}

}  // namespace cudoctor::runtime
