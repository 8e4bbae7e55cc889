#pragma once
// JSON text into an nlohmann::json document, read by RapidJSON's SAX reader: nlohmann's own
// lexer takes a character at a time and keeps every token's text for its messages, about
// three quarters of the time the knowledge base takes to load. The document is the one
// nlohmann::json::parse builds (non-negative integers unsigned, negative ones signed, the
// rest double, a repeated key's last value kept); invalid UTF-8 is an error, as it is there.
// Unlike there, an exponent past a double's range is an error even when the number is zero
// ("0e400"), and so is a NUL byte.
#include <nlohmann/json.hpp>
#include <string_view>

#include "cudoctor/util/result.hpp"

namespace cudoctor::kb {

// The document, or what is wrong and where ("Missing a comma or '}' after an object member,
// at line 12, column 7").
util::Result<nlohmann::json> read_json(std::string_view text);

}  // namespace cudoctor::kb
