// Usage errors in plain words, with a guess for a slip of the fingers (clig.dev: "If the user
// did something wrong and you can guess what they meant, suggest it").
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cudoctor/cli/help.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {
namespace {

std::string who(const Command* c) {
  return c ? fmt::format("cudoctor {}", c->name) : std::string("cudoctor");
}

std::string help_hint(const Command* c) {
  return c ? fmt::format("cudoctor {} --help lists its options", c->name)
           : std::string("cudoctor --help lists the commands and options");
}

// The option names that apply where the argument was given.
std::vector<std::string> option_names(const CLI::App& root, const Command* c) {
  std::vector<std::string> names{"--help", "--version"};
  const auto add = [&](const std::vector<OptionDoc>& opts) {
    for (const auto& o : opts)
      if (!o.positional)
        for (const auto& n : o.names)
          if (n.size() > 2) names.push_back(n);
  };
  for (const auto& d : command_docs(root))
    if (!c || d.command == c) {
      add(d.own);
      if (c) add(d.common);
    }
  if (!c) add(common_options(root));
  return names;
}

}  // namespace

Usage unknown_argument(const CLI::App& root, const Command* command, const std::string& arg) {
  if (arg.size() > 1 && arg.front() == '-') {
    const auto name = arg.substr(0, arg.find('='));
    const auto guess = nearest(name, option_names(root, command));
    return {fmt::format("{}: unknown option '{}'{}", who(command), util::visible(name),
                        guess.empty() ? "; " + help_hint(command) : ". Did you mean '" + guess + "'?")};
  }
  if (!command) {
    const auto guess = nearest(arg, command_names());
    return {fmt::format("cudoctor: unknown command '{}'{}", util::visible(arg),
                        guess.empty() ? "; " + help_hint(nullptr) : ". Did you mean '" + guess + "'?")};
  }
  return {fmt::format("{}: unexpected argument '{}'; {}", who(command), util::visible(arg), help_hint(command))};
}

Usage parse_error(const Command* command, const std::string& what) {
  // CLI11 says "NAME: MESSAGE"; ArgumentMismatch messages are the ones in parser-speak.
  const auto colon = what.find(": ");
  const auto name = colon == std::string::npos ? std::string() : what.substr(0, colon);
  std::string msg = what;
  if (what.find("At Most") != std::string::npos)
    msg = fmt::format("{}: give it once (one value at a time)", name);
  else if (what.find("required") != std::string::npos && what.find("missing") != std::string::npos)
    msg = fmt::format("{}: needs a value", name);
  return {fmt::format("{}: {}\n({})", who(command), util::visible(msg), help_hint(command))};
}

}  // namespace cudoctor::cli
