// `cudoctor completion bash|zsh|fish`: completion code written from the parser's own options,
// so a new option or command completes the day it is added.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <map>

#include "cudoctor/cli/help.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {
namespace {

std::string join(const std::vector<std::string>& v, std::string_view sep = " ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// What the completion code needs: per command its option names and positionals, and for
// every option that takes a value what to offer for it.
struct Model {
  std::vector<std::string> commands;
  std::vector<std::string> top_options;                               // before any command
  std::map<std::string, std::string> options;                         // command -> its option names, joined
  std::map<std::string, const OptionDoc*> values;                     // option name -> the option (with a value)
  std::vector<std::pair<std::string, const OptionDoc*>> positionals;  // "cmd:N" or "cmd:*" -> what to offer
};

Model model_of(const std::vector<CommandDoc>& docs, const std::vector<OptionDoc>& common) {
  Model m;
  m.commands = command_names();
  m.top_options = {"--help", "--version"};
  for (const auto& o : common)
    for (const auto& n : o.names) m.top_options.push_back(n);
  for (const auto& o : common)
    if (!o.value.empty())
      for (const auto& n : o.names) m.values.emplace(n, &o);
  for (const auto& d : docs) {
    std::vector<std::string> names{"--help"};
    std::size_t index = 0;
    for (const auto& o : d.own) {
      if (o.positional) {
        m.positionals.emplace_back(fmt::format("{}:{}", d.command->name, o.repeats ? "*" : std::to_string(index++)),
                                   &o);
        continue;
      }
      for (const auto& n : o.names) names.push_back(n);
      if (!o.value.empty())
        for (const auto& n : o.names) m.values.emplace(n, &o);
    }
    for (const auto& o : d.common)
      for (const auto& n : o.names) names.push_back(n);
    m.options.emplace(std::string(d.command->name), join(names));
  }
  return m;
}

std::vector<std::string> value_names(const Model& m) {
  std::vector<std::string> v;
  for (const auto& [name, _] : m.values) v.push_back(name);
  return v;
}

// The shell-neutral body shared by bash and zsh: find the command and the positional index.
std::string scan(const Model& m, const char* first, const char* words) {
  return fmt::format(
      "  local cmd='' npos=0 skip=0 i w\n"
      "  for ((i = {}; i < cword; i++)); do\n"
      "    w=${{{}[i]}}\n"
      "    if ((skip)); then skip=0; continue; fi\n"
      "    case $w in\n"
      "      {}) skip=1 ;;\n"
      "      -*) ;;\n"
      "      *) if [[ -z $cmd ]]; then\n"
      "           case $w in {}) cmd=$w ;; *) npos=$((npos + 1)) ;; esac\n"
      "         else npos=$((npos + 1)); fi ;;\n"
      "    esac\n"
      "  done\n",
      first, words, join(value_names(m), "|"), join(m.commands, "|"));
}

std::string shell_script(const Model& m, bool zsh) {
  // Offer words, files or directories: bash with compgen, zsh with compadd and _files.
  const auto words = [&](const std::string& list) {
    return zsh ? fmt::format("compadd -- {}", list) : fmt::format("COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))", list);
  };
  const auto files = zsh ? std::string("_files")
                         : std::string("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))");
  const auto dirs = zsh ? std::string("_files -/")
                        : std::string("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))");
  const auto offer = [&](const OptionDoc& o) {
    const auto kind = o.completes();
    if (kind == "choices") return words(join(o.values));
    if (kind == "commands") return words(join(m.commands));
    if (kind == "files") return files;
    if (kind == "dirs") return dirs;
    return std::string(":");
  };
  std::string s;
  s += zsh ? "#compdef cudoctor\n# cudoctor completion for zsh: source <(cudoctor completion zsh), or this file as\n"
             "# _cudoctor in a directory of $fpath. Written by `cudoctor completion zsh`.\n_cudoctor() {\n"
             "  local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cword=$CURRENT\n"
           : "# cudoctor completion for bash: source <(cudoctor completion bash).\n"
             "# Written by `cudoctor completion bash`.\n_cudoctor() {\n"
             "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cword=$COMP_CWORD\n";
  s += scan(m, zsh ? "2" : "1", zsh ? "words" : "COMP_WORDS");
  s += "  case $prev in\n";
  for (const auto& [name, o] : m.values) s += fmt::format("    {}) {}; return ;;\n", name, offer(*o));
  s += "  esac\n  if [[ $cur == -* ]]; then\n    case $cmd in\n";
  for (const auto& [cmd, names] : m.options) s += fmt::format("      {}) {} ;;\n", cmd, words(names));
  s += fmt::format("      *) {} ;;\n    esac\n    return\n  fi\n  case $cmd:$npos in\n", words(join(m.top_options)));
  s += fmt::format("    :0) {} ;;\n", words(join(m.commands)));
  for (const auto& [key, o] : m.positionals) s += fmt::format("    {}) {} ;;\n", key, offer(*o));
  s += "  esac\n}\n";
  s += zsh ? "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n  _cudoctor \"$@\"\nelse\n"
             "  compdef _cudoctor cudoctor\nfi\n"
           : "complete -F _cudoctor cudoctor\n";
  return s;
}

std::string fish_quote(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_option(const OptionDoc& o, const std::string& condition) {
  std::string line = "complete -c cudoctor";
  if (!condition.empty()) line += " -n " + fish_quote(condition);
  for (const auto& n : o.names) line += n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
  const auto kind = o.completes();
  if (kind == "choices")
    line += " -x -a " + fish_quote(join(o.values));
  else if (kind == "files")
    line += " -r -F";
  else if (kind == "dirs")
    line += " -x -a '(__fish_complete_directories (commandline -ct))'";
  else if (!o.value.empty())
    line += " -x";
  return line + " -d " + fish_quote(o.help) + "\n";
}

std::string fish_script(const std::vector<CommandDoc>& docs, const std::vector<OptionDoc>& common) {
  std::string s =
      "# cudoctor completion for fish: cudoctor completion fish | source.\n"
      "# Written by `cudoctor completion fish`.\ncomplete -c cudoctor -f\n";
  for (const auto& d : docs)
    s += fmt::format("complete -c cudoctor -n __fish_use_subcommand -a {} -d {}\n", d.command->name,
                     fish_quote(d.command->help));
  s += "complete -c cudoctor -s h -l help -d 'Help; after a command, that command\\'s'\n"
       "complete -c cudoctor -n __fish_use_subcommand -l version -d 'The version, the commit and the knowledge "
       "base\\'s date'\n";
  for (const auto& o : common) {
    std::vector<std::string> where;
    for (const auto& d : docs)
      for (const auto& c : d.common)
        if (c.names == o.names) where.emplace_back(d.command->name);
    s += fish_option(o, "__fish_use_subcommand; or __fish_seen_subcommand_from " + join(where));
  }
  for (const auto& d : docs) {
    const auto cond = fmt::format("__fish_seen_subcommand_from {}", d.command->name);
    std::size_t index = 0;
    for (const auto& o : d.own) {
      if (!o.positional) {
        s += fish_option(o, cond);
        continue;
      }
      // Positionals: the first one's choices, files for any file argument.
      const auto kind = o.completes();
      if ((kind == "choices" || kind == "commands") && index == 0)
        s += fmt::format("complete -c cudoctor -n {} -a {}\n", fish_quote(cond),
                         fish_quote(join(kind == "commands" ? command_names() : o.values)));
      else if (kind == "files")
        s += fmt::format("complete -c cudoctor -n {} -F\n", fish_quote(cond));
      ++index;
    }
  }
  return s;
}

}  // namespace

std::string completion_script(const CLI::App& root, std::string_view shell) {
  const auto docs = command_docs(root);
  const auto common = common_options(root);
  if (shell == "fish") return fish_script(docs, common);
  if (shell != "bash" && shell != "zsh") return "";
  return shell_script(model_of(docs, common), shell == "zsh");
}

}  // namespace cudoctor::cli
