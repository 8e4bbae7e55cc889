#include <fmt/format.h>

#include "cudoctor/cli/check_command.hpp"
#include "cudoctor/cli/output.hpp"
#include "cudoctor/kb/kb.hpp"
#include "cudoctor/render/render.hpp"
#include "cudoctor/sys/root_sys.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {

using util::visible;

int run_kb(const CommonOptions& o, const KbOptions& k) {
  const auto& kb = kb::builtin();
  std::string out;
  if (k.topic.empty()) {
    out = render::kb_summary(kb, o.verbose);
  } else if (k.query.empty()) {
    fmt::print(stderr, "cudoctor kb {}: say what to look up\n", visible(k.topic));
    return 2;
  } else if (k.topic == "gpu") {
    out = render::kb_gpu(kb, kb.find_gpus(k.query));
  } else if (k.topic == "driver" || k.topic == "toolkit") {
    const auto v = util::Version::parse(k.query);
    if (!v) {
      fmt::print(stderr, "cudoctor kb {}: '{}' is not a version\n", visible(k.topic), visible(k.query));
      return 2;
    }
    out = k.topic == "driver" ? render::kb_driver(kb, *v) : render::kb_toolkit(kb, *v);
  } else if (k.topic == "error") {
    std::vector<const kb::ReturnCode*> hits;
    const auto code = util::parse_int(k.query);
    for (const auto& e : kb.cuda_errors())
      if ((code && e.code == *code) || util::to_lower(e.name) == util::to_lower(k.query)) hits.push_back(&e);
    for (const auto& [c, e] : kb.nvml_return_codes())
      if ((code && c == *code) || util::to_lower(e.name) == util::to_lower(k.query)) hits.push_back(&e);
    out = render::kb_errors(hits);
  }
  if (out.empty()) {
    fmt::print(stderr, "cudoctor kb {}: nothing in the knowledge base matches '{}'\n", visible(k.topic),
               visible(k.query));
    return 1;
  }
  if (!o.redact) return emit(out, 0);
  const auto sys = sys::make_root_sys(o.root);
  return emit(redacted(o, *sys, out), 0);
}

}  // namespace cudoctor::cli
