#pragma once
// How a child's reply travels on its pipe: "<length>\n<bytes>". A reply is complete when its
// length has arrived, whether or not the pipe is ever closed (a helper process may hold it
// open); bytes beyond it mean something else wrote into the pipe too.
#include <string>

namespace cudoctor::runtime {

enum class Frame { partial, complete, malformed };

// The framed form of a payload.
std::string framed(const std::string& payload);

// What the bytes read so far are; when complete and payload is not null, the payload.
Frame frame_state(const std::string& data, std::string* payload);

}  // namespace cudoctor::runtime
