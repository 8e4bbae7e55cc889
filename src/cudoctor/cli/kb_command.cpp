// `cudoctor kb [gpu|driver|error|toolkit QUERY]`: 0 answered, 1 nothing matched, 2 bad input.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/commands.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

using util::visible;

void add_kb_options(CLI::App& app, Options& o) {
  const std::vector<std::string> topics{"gpu", "driver", "toolkit", "error"};
  app.add_option("topic", o.kb.topic, "What to look up: a GPU, a driver, a toolkit or an error")
      ->check(one_of(topics))
      ->type_name(choices(topics));
  app.add_option("query", o.kb.words, "A name, a version or an error (a pasted message need not be quoted)")
      ->type_name("QUERY");
}

int run_kb(const Options& all) {
  const auto& o = all.common;
  const auto& k = all.kb;
  const auto& kb = kb::builtin();
  std::string query;
  for (const auto& w : k.words) query += (query.empty() ? "" : " ") + w;
  std::string out;
  if (k.topic.empty()) {
    out = render::kb_summary(kb, o.verbose);
  } else if (query.empty()) {
    fmt::print(stderr, "cudoctor kb {}: say what to look up\n", visible(k.topic));
    return 2;
  } else if (k.topic == "gpu") {
    out = render::kb_gpu(kb, kb.find_gpus(query));
  } else if (k.topic == "driver" || k.topic == "toolkit") {
    const auto v = util::Version::parse(query);
    if (!v) {
      fmt::print(stderr, "cudoctor kb {}: '{}' is not a version\n", visible(k.topic), visible(query));
      return 2;
    }
    out = k.topic == "driver" ? render::kb_driver(kb, *v) : render::kb_toolkit(kb, *v);
  } else if (k.topic == "error") {
    out = render::kb_errors(kb.find_errors(query));
  }
  if (out.empty()) {
    fmt::print(stderr, "cudoctor kb {}: nothing in the knowledge base matches '{}'\n", visible(k.topic),
               visible(query));
    return 1;
  }
  return emit(finished(o, std::move(out)), 0);
}

}  // namespace cudoctor::cli
