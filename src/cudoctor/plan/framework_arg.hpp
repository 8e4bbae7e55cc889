#pragma once
// `plan --framework`: which framework, and which of its releases, the user asks about.
#include <string>

#include "cudoctor/kb/kb.hpp"
#include "cudoctor/util/result.hpp"

namespace cudoctor::plan {

struct FrameworkArg {
  std::string name;     // as the knowledge base names it: "torch"
  std::string version;  // "" every release, else a release prefix: "2.5"
};

// "NAME" or "NAME==VERSION", as pip writes it; "pytorch" is taken as "torch". An error (the
// frameworks the knowledge base knows) when it knows no such framework.
util::Result<FrameworkArg> parse_framework(const std::string& arg, const kb::KnowledgeBase& kb);

}  // namespace cudoctor::plan
