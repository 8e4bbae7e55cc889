#include "cudoctor/probe/setting_lines.hpp"

#include <algorithm>
#include <cctype>

#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe::lines {
namespace {

bool is_name(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// NAME=value as one word; false when the word is no assignment.
bool split_assignment(const std::string& word, Assignment& out) {
  const auto eq = word.find('=');
  if (eq == std::string::npos || !is_name(std::string_view(word).substr(0, eq))) return false;
  out = {word.substr(0, eq), word.substr(eq + 1)};
  return true;
}

// The commands of a line, each its words.
std::vector<std::vector<std::string>> commands(std::string_view line) {
  std::vector<std::string> words;
  std::vector<std::vector<std::string>> out;
  if (!shell_words(line, words)) return out;
  out.emplace_back();
  for (auto& w : words) {
    if (w == ";")
      out.emplace_back();
    else
      out.back().push_back(std::move(w));
  }
  return out;
}

std::string unquote(std::string_view v) {
  v = util::trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return std::string(v);
}

}  // namespace

bool shell_words(std::string_view line, std::vector<std::string>& words) {
  words.clear();
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      const auto end = line.find('\'', i + 1);
      if (end == std::string_view::npos) return false;
      cur.append(line.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() &&
            std::string_view("\"\\$`").find(line[j + 1]) != std::string_view::npos)
          ++j;
        cur.push_back(line[j]);
      }
      if (j >= line.size()) return false;
      i = j;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur.push_back(line[++i]);
      in_word = true;
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == ';' || c == '&' || c == '|') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      if (i + 1 < line.size() && line[i + 1] == c) ++i;
      words.emplace_back(";");
    } else {
      cur.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return true;
}

std::vector<Assignment> shell_assignments(std::string_view line) {
  std::vector<Assignment> out;
  for (const auto& cmd : commands(line)) {
    std::size_t i = 0;
    // if …; then export A=1; fi — the words that open a block come before the command.
    while (i < cmd.size() && (cmd[i] == "then" || cmd[i] == "else" || cmd[i] == "do" || cmd[i] == "{" || cmd[i] == "("))
      ++i;
    if (i >= cmd.size()) continue;
    const bool exported =
        cmd[i] == "export" || ((cmd[i] == "declare" || cmd[i] == "typeset") && i + 1 < cmd.size() &&
                               cmd[i + 1].starts_with("-") && cmd[i + 1].find('x') != std::string::npos);
    if (!exported) continue;
    for (++i; i < cmd.size() && cmd[i].starts_with("-"); ++i) {
    }
    Assignment a;
    for (; i < cmd.size(); ++i)
      if (split_assignment(cmd[i], a)) out.push_back(a);
  }
  return out;
}

bool sets_one_thing(std::string_view line) {
  const auto cmds = commands(line);
  std::size_t nonempty = 0;
  for (const auto& c : cmds) nonempty += !c.empty();
  if (nonempty != 1) return false;
  const auto& cmd = *std::find_if(cmds.begin(), cmds.end(), [](const auto& c) { return !c.empty(); });
  if (cmd[0] == "options") return cmd.size() == 3;
  if (cmd[0].starts_with("Environment") || cmd[0].starts_with("DefaultEnvironment"))
    return systemd_environment(line).size() == 1;
  if (cmd[0] == "export") return cmd.size() == 2 && cmd[1].find('=') != std::string::npos;
  if (cmd[0] == "set" || cmd[0] == "setenv") return fish_or_csh_assignments(line).size() == 1;
  return cmd.size() == 1 && cmd[0].find('=') != std::string::npos;
}

std::string written_word(std::string_view line, const std::string& name) {
  std::string text = grub_cmdline(line);
  if (text.empty()) text = std::string(line);
  const auto dot = name.find('.');
  for (const auto word : util::split_ws(text)) {
    std::string key(word.substr(0, word.find('=')));
    std::replace(key.begin(), key.end(), '-', '_');
    // "module.param" on a command line; "param" on an options line of that module.
    if (key == name || (dot != std::string::npos && key == name.substr(dot + 1))) return std::string(word);
  }
  return "";
}

std::vector<Assignment> fish_or_csh_assignments(std::string_view line) {
  std::vector<Assignment> out;
  for (const auto& cmd : commands(line)) {
    if (cmd.size() >= 3 && cmd[0] == "setenv" && is_name(cmd[1])) {
      out.push_back({cmd[1], cmd[2]});
      continue;
    }
    if (cmd.size() < 3 || cmd[0] != "set") continue;
    bool exported = false;
    std::size_t i = 1;
    for (; i < cmd.size() && cmd[i].starts_with("-"); ++i) {
      const auto& f = cmd[i];
      exported = exported || f == "--export" || (!f.starts_with("--") && f.find('x') != std::string::npos);
    }
    if (!exported || i + 1 >= cmd.size() || !is_name(cmd[i])) continue;
    std::string value;
    for (std::size_t k = i + 1; k < cmd.size(); ++k) value += (k > i + 1 ? " " : "") + cmd[k];
    out.push_back({cmd[i], value});
  }
  return out;
}

std::vector<Assignment> plain_assignments(std::string_view line) {
  line = util::trim(line);
  if (line.empty() || line[0] == '#') return {};
  if (line.starts_with("export ")) line = util::trim(line.substr(7));
  const auto eq = line.find('=');
  if (eq == std::string_view::npos || !is_name(util::trim(line.substr(0, eq)))) return {};
  return {{std::string(util::trim(line.substr(0, eq))), unquote(line.substr(eq + 1))}};
}

std::vector<Assignment> systemd_environment(std::string_view line) {
  line = util::trim(line);
  const auto eq = line.find('=');
  if (eq == std::string_view::npos) return {};
  const auto key = util::trim(line.substr(0, eq));
  if (key != "Environment" && key != "DefaultEnvironment") return {};
  // systemd.exec(5): space-separated assignments, each optionally in "…" or '…'; no ; or #.
  std::vector<Assignment> out;
  const auto rest = util::trim(line.substr(eq + 1));
  std::string cur;
  char quote = 0;
  Assignment a;
  const auto flush = [&] {
    if (split_assignment(cur, a)) out.push_back(a);
    cur.clear();
  };
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && i + 1 < rest.size())
        cur.push_back(rest[++i]);
      else
        cur.push_back(c);
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ' ' || c == '\t') {
      flush();
    } else {
      cur.push_back(c);
    }
  }
  if (quote) return {};
  flush();
  return out;
}

std::vector<Assignment> modprobe_options(std::string_view line) {
  const auto words = util::split_ws(util::trim(line));
  std::vector<Assignment> out;
  if (words.size() < 3 || words[0] != "options" || words[0].starts_with("#")) return out;
  std::string module(words[1]);
  std::replace(module.begin(), module.end(), '-', '_');
  for (std::size_t i = 2; i < words.size(); ++i) {
    if (words[i].starts_with("#")) break;
    const auto eq = words[i].find('=');
    const auto name = words[i].substr(0, eq);
    if (name.empty()) continue;
    out.push_back(
        {module + "." + std::string(name), eq == std::string_view::npos ? "" : unquote(words[i].substr(eq + 1))});
  }
  return out;
}

std::vector<Assignment> cmdline_params(std::string_view cmdline) {
  std::vector<Assignment> out;
  for (const auto word : util::split_ws(util::trim(cmdline))) {
    const auto eq = word.find('=');
    const auto key = word.substr(0, eq);
    const auto dot = key.find('.');
    // module.param, not the boot loader's own (BOOT_IMAGE=, root=, rd.…) words.
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size() || key.starts_with("rd.") ||
        key.starts_with("systemd.") || key.starts_with("modprobe.") || key.find('/') != std::string_view::npos)
      continue;
    std::string module(key.substr(0, dot));
    std::replace(module.begin(), module.end(), '-', '_');
    out.push_back({module + "." + std::string(key.substr(dot + 1)),
                   eq == std::string_view::npos ? "" : unquote(word.substr(eq + 1))});
  }
  return out;
}

std::string grub_cmdline(std::string_view line) {
  // /etc/default/grub is sourced by a shell: read as one (quotes, a trailing comment).
  std::vector<std::string> words;
  if (!shell_words(line, words)) return "";
  Assignment a;
  for (const auto& w : words)
    if (split_assignment(w, a) && (a.name == "GRUB_CMDLINE_LINUX" || a.name == "GRUB_CMDLINE_LINUX_DEFAULT"))
      return a.value;
  return "";
}

std::vector<Assignment> nccl_conf_assignments(std::string_view line) {
  line = util::trim(line);
  if (line.empty() || line[0] == '#') return {};
  const auto eq = line.find('=');
  if (eq == std::string_view::npos || !is_name(util::trim(line.substr(0, eq)))) return {};
  return {{std::string(util::trim(line.substr(0, eq))), std::string(util::trim(line.substr(eq + 1)))}};
}

std::vector<Assignment> nvidia_smi_settings(std::string_view line) {
  std::vector<Assignment> out;
  // Long options (nvidia-smi --help) to the short ones the knowledge base names.
  static constexpr std::pair<std::string_view, std::string_view> k_long[] = {
      {"--power-limit", "-pl"},       {"--applications-clocks", "-ac"},  {"--persistence-mode", "-pm"},
      {"--lock-gpu-clocks", "-lgc"},  {"--lock-memory-clocks", "-lmc"},  {"--reset-applications-clocks", "-rac"},
      {"--reset-gpu-clocks", "-rgc"}, {"--reset-memory-clocks", "-rmc"}, {"--compute-mode", "-c"}};
  static constexpr std::string_view k_short[] = {"-pl", "-ac", "-pm", "-lgc", "-lmc", "-rac", "-rgc", "-rmc", "-c"};
  for (auto cmd : commands(line)) {
    // ExecStart=/usr/bin/nvidia-smi …, sudo nvidia-smi …, -/usr/bin/nvidia-smi (systemd's prefixes).
    std::size_t i = 0;
    if (!cmd.empty()) {
      const auto eq = cmd[0].find('=');
      if (eq != std::string::npos && cmd[0].starts_with("Exec")) cmd[0] = cmd[0].substr(eq + 1);
      while (!cmd[0].empty() && std::string_view("-@:+!").find(cmd[0][0]) != std::string_view::npos) cmd[0].erase(0, 1);
    }
    // The program may come after sudo, env, a cron schedule and user, …: the first word that names it.
    while (i < cmd.size() && cmd[i] != "nvidia-smi" && !cmd[i].ends_with("/nvidia-smi")) ++i;
    if (i >= cmd.size()) continue;
    // `nvidia-smi dmon -c 2`: a subcommand, whose options set nothing.
    if (i + 1 < cmd.size() && !cmd[i + 1].starts_with("-")) continue;
    for (++i; i < cmd.size(); ++i) {
      std::string opt = cmd[i], value;
      const auto eq = opt.find('=');
      if (eq != std::string::npos) {
        value = opt.substr(eq + 1);
        opt.resize(eq);
      }
      for (const auto& [l, s] : k_long)
        if (opt == l) opt = s;
      if (std::find(std::begin(k_short), std::end(k_short), opt) == std::end(k_short)) continue;
      const bool takes_value = opt != "-rac" && opt != "-rgc" && opt != "-rmc";
      if (takes_value && eq == std::string::npos && i + 1 < cmd.size()) value = cmd[++i];
      out.push_back({"nvidia-smi " + opt, value});
    }
  }
  return out;
}

}  // namespace cudoctor::probe::lines
