#include "cudoctor/cli/help.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cudoctor/render/render.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::cli {
namespace {

OptionDoc doc_of(const CLI::Option& opt) {
  OptionDoc d;
  d.positional = opt.get_positional() && !opt.nonpositional();
  if (d.positional) {
    d.names.push_back(opt.get_name(true));
  } else {
    for (const auto& s : opt.get_snames()) d.names.push_back("-" + s);
    for (const auto& l : opt.get_lnames()) d.names.push_back("--" + l);
  }
  if (opt.get_type_size() != 0) d.value = opt.get_type_name();
  if (d.value.size() > 2 && d.value.front() == '{' && d.value.back() == '}') {
    const auto inner = d.value.substr(1, d.value.size() - 2);
    for (const auto v : util::split(inner, ',')) d.values.emplace_back(v);
  }
  d.help = opt.get_description();
  d.repeats = opt.get_items_expected_max() > 1;
  return d;
}

bool is_help(const CLI::App& app, const CLI::Option* opt) {
  return opt == app.get_help_ptr() || opt == app.get_help_all_ptr();
}

// "Output Machine" holds group.
bool in_groups(std::string_view groups, std::string_view group) {
  for (const auto g : util::split_ws(groups))
    if (g == group) return true;
  return false;
}

std::string usage_of(const CommandDoc& c) {
  std::string u = fmt::format("cudoctor {} [OPTIONS]", c.command->name);
  for (const auto& o : c.own) {
    if (!o.positional) continue;
    u += " [" + o.value + (o.repeats ? "..." : "") + "]";
  }
  return u;
}

// "  --format {text,json,markdown}  Output format", the text wrapped beside a 30-column name.
void option_lines(std::string& out, const std::vector<OptionDoc>& opts, std::size_t width, bool positionals) {
  constexpr std::size_t k_name = 30;
  for (const auto& o : opts) {
    if (o.positional != positionals) continue;
    std::string name;
    for (const auto& n : o.names) name += (name.empty() ? "" : ", ") + n;
    if (o.positional && !o.value.empty()) name = o.value;
    if (!o.value.empty() && !o.positional) name += " " + o.value;
    std::string line = "  " + name;
    const auto text = render::wrap(o.help, width > k_name + 20 ? width - k_name : 20, std::string(k_name, ' '));
    if (line.size() + 2 > k_name)
      out += line + "\n" + std::string(k_name, ' ') + text + "\n";
    else
      out += line + std::string(k_name - line.size(), ' ') + text + "\n";
  }
}

// Lines "A\tB" as "  A  B", B wrapped; A alone on its line when it is long (a command line).
void pairs(std::string& out, std::string_view lines, std::size_t width, std::size_t column) {
  for (const auto& [av, bv] : split_pairs(lines)) {
    const std::string a(av), b(bv);
    const auto text = render::wrap(b, width > column + 20 ? width - column : 20, std::string(column, ' '));
    if (a.size() + 4 > column)
      out += "  " + a + (b.empty() ? "" : "\n" + std::string(column, ' ') + text) + "\n";
    else
      out += "  " + a + std::string(column - a.size() - 2, ' ') + text + "\n";
  }
}

}  // namespace

std::vector<std::pair<std::string_view, std::string_view>> split_pairs(std::string_view lines) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (const auto line : util::split(lines, '\n')) {
    if (line.empty()) continue;
    const auto tab = line.find('\t');
    out.emplace_back(line.substr(0, tab), tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1));
  }
  return out;
}

std::string OptionDoc::completes() const {
  if (!values.empty()) return "choices";
  if (value == "COMMAND") return "commands";
  if (value.find("DIR") != std::string::npos && value.find("FILE") == std::string::npos) return "dirs";
  if (value.find("FILE") != std::string::npos || value.find("PATH") != std::string::npos) return "files";
  return "";
}

std::vector<OptionDoc> common_options(const CLI::App& root) {
  std::vector<OptionDoc> out;
  for (const auto* opt : root.get_options()) {
    if (is_help(root, opt)) continue;
    const auto& g = opt->get_group();
    if (g != k_output_group && g != k_machine_group && g != k_probe_group && g != k_check_group) continue;
    auto d = doc_of(*opt);
    d.group = g;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<CommandDoc> command_docs(const CLI::App& root) {
  std::vector<CommandDoc> out;
  const auto common = common_options(root);
  for (const auto& c : commands()) {
    CommandDoc d;
    d.command = &c;
    const auto subs = root.get_subcommands([&](const CLI::App* a) { return a->get_name() == c.name; });
    if (!subs.empty()) {
      const auto* sub = subs.front();
      for (const auto* opt : sub->get_options())
        if (!is_help(*sub, opt)) d.own.push_back(doc_of(*opt));
      std::stable_partition(d.own.begin(), d.own.end(), [](const OptionDoc& o) { return !o.positional; });
    }
    for (const auto& o : common)
      if (in_groups(c.groups, o.group)) d.common.push_back(o);
    out.push_back(std::move(d));
  }
  return out;
}

std::string help_text(const CLI::App& root, const Command* command, std::size_t width) {
  std::string out;
  const auto docs = command_docs(root);
  if (!command) {
    out += render::wrap(
               "cudoctor finds where the NVIDIA GPU -> kernel driver -> CUDA toolkit -> framework chain breaks on "
               "this machine, says why with the evidence, and prints the fix.",
               width, "") +
           "\n\nUsage: cudoctor [COMMAND] [OPTIONS]   (no command: check)\n\nCommands:\n";
    std::string rows;
    for (const auto& d : docs) rows += fmt::format("{}\t{}\n", d.command->name, d.command->help);
    pairs(out, rows, width, 14);
    const auto common = common_options(root);
    for (const auto group : {k_output_group, k_machine_group, k_probe_group, k_check_group}) {
      std::vector<OptionDoc> in;
      for (const auto& o : common)
        if (o.group == group) in.push_back(o);
      out += fmt::format("\n{} options:\n", group == k_check_group ? std::string_view("check") : group);
      option_lines(out, in, width, false);
    }
    out += "\nOther options:\n";
    pairs(out,
          "-h, --help\tthis help; after a command, that command's\n--version\tthe version, the commit and the "
          "knowledge base's date\n",
          width, 30);
    out += "\nExit codes:\n";
    pairs(out, k_exit_codes, width, 6);
    out += "\nEnvironment:\n";
    pairs(out, k_display_env, width, 30);
    out += "\n" +
           render::wrap(
               "'cudoctor help COMMAND' (or 'cudoctor COMMAND --help') gives a command's options, examples "
               "and exit codes. Learn more: man cudoctor; every finding is described in docs/findings.md "
               "(installed under share/doc/cudoctor).",
               width, "") +
           "\n";
    return out;
  }
  const CommandDoc* d = nullptr;
  for (const auto& c : docs)
    if (c.command == command) d = &c;
  if (!d) return "";
  out += render::wrap(fmt::format("cudoctor {}: {}", command->name, command->help), width, "") + "\n\n";
  out += "Usage: " + usage_of(*d) + "\n";
  bool any_positional = false;
  for (const auto& o : d->own) any_positional = any_positional || o.positional;
  if (any_positional) {
    out += "\nArguments:\n";
    option_lines(out, d->own, width, true);
  }
  out += "\nOptions:\n";
  option_lines(out, d->own, width, false);
  out += "  -h, --help                  this help\n";
  if (!d->common.empty()) {
    out += "\nCommon options:\n";
    option_lines(out, d->common, width, false);
  }
  if (!command->examples.empty()) {
    out += "\nExamples:\n";
    pairs(out, command->examples, width, 40);
  }
  out += "\nExit codes:\n";
  pairs(out, command->exits, width, 6);
  std::string env(command->env);
  if (in_groups(command->groups, k_output_group)) env += k_display_env;
  if (!env.empty()) {
    out += "\nEnvironment:\n";
    pairs(out, env, width, 30);
  }
  out += "\n" + render::wrap("Learn more: man cudoctor; the findings are described in docs/findings.md.", width, "") +
         "\n";
  return out;
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    const auto d = util::edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const auto limit = std::max<std::size_t>(1, std::max(word.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

}  // namespace cudoctor::cli
