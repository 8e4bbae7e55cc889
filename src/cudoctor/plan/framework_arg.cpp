#include "cudoctor/plan/framework_arg.hpp"

#include <fmt/format.h>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::plan {

util::Result<FrameworkArg> parse_framework(const std::string& arg, const kb::KnowledgeBase& kb) {
  FrameworkArg out;
  const auto eq = arg.find("==");
  out.name = arg.substr(0, eq);
  if (eq != std::string::npos) out.version = arg.substr(eq + 2);
  // The project calls itself PyTorch; its package, and the knowledge base, say torch.
  if (out.name == "pytorch") out.name = "torch";
  if (!kb.framework(out.name)) {
    std::string known;
    for (const auto& f : kb.frameworks()) known += (known.empty() ? "" : ", ") + f.name;
    return util::error(fmt::format("--framework {}: not one of {}", util::visible(out.name), known));
  }
  return out;
}

}  // namespace cudoctor::plan
