// The settings that change how CUDA work runs, and every place each is set: the environment,
// shell start-up files, environments' activation scripts, systemd units, NCCL's configuration
// files, modprobe.d and kernel command lines. Lines are read, never run.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/probe/setting_lines.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

using snapshot::Setting;

// The variables read by CUDA, its libraries and the frameworks.
bool relevant_variable(std::string_view name) {
  static constexpr std::string_view k_prefixes[] = {"CUDA_",
                                                    "CUBLAS",
                                                    "CUDNN_",
                                                    "NCCL_",
                                                    "PYTORCH_",
                                                    "TORCH_",
                                                    "TF_",
                                                    "XLA_",
                                                    "JAX_",
                                                    "CUPY_",
                                                    "NVIDIA_TF32_OVERRIDE",
                                                    "OMP_NUM_THREADS",
                                                    "MKL_NUM_THREADS"};
  // Terraform's TF_ variables are no TensorFlow's.
  static constexpr std::string_view k_terraform[] = {"TF_VAR_",     "TF_LOG",       "TF_CLI_",          "TF_INPUT",
                                                     "TF_DATA_DIR", "TF_WORKSPACE", "TF_IN_AUTOMATION", "TF_REGISTRY_",
                                                     "TF_PLUGIN_",  "TF_TOKEN_",    "TF_IGNORE",        "TF_STATE_"};
  if (std::any_of(std::begin(k_terraform), std::end(k_terraform), [&](auto p) { return name.starts_with(p); }))
    return false;
  return std::any_of(std::begin(k_prefixes), std::end(k_prefixes), [&](auto p) { return name.starts_with(p); });
}

// Parameters of the GPU's kernel modules and of the integrated GPU beside it.
bool relevant_module(std::string_view name) {
  const auto module = name.substr(0, name.find('.'));
  return module.starts_with("nvidia") || module == "i915" || module == "xe" || module == "nouveau";
}

enum class Syntax { shell, fish_csh, plain, nccl, systemd, modprobe, grub, cmdline, commands };

const char* syntax_name(Syntax s, const std::string& path) {
  switch (s) {
    case Syntax::shell:
      return "sh";
    case Syntax::fish_csh:
      return path.ends_with(".fish") ? "fish" : "csh";
    case Syntax::plain:
      return "environment";
    case Syntax::nccl:
      return "nccl";
    case Syntax::systemd:
      return "systemd";
    case Syntax::modprobe:
      return "modprobe";
    case Syntax::grub:
      return "grub";
    case Syntax::cmdline:
      return "cmdline";
    case Syntax::commands:
      return "commands";
  }
  return "";
}

class Reader {
 public:
  Reader(Context& ctx, snapshot::SettingsFacts& facts) : m_ctx(ctx), m_facts(facts), m_uid(ctx.sys().identity().uid) {}

  void file(const std::string& path, Syntax syntax, const std::string& scope) {
    if (!m_seen.insert(path).second) return;
    const auto text = m_ctx.read_optional(path, 1 << 20);
    if (!text) return;
    m_facts.files_read.push_back(path);
    int n = 0;
    for (const auto raw : util::lines(*text)) {
      ++n;
      const auto line = util::trim(raw);
      if (line.empty() || line[0] == '#') continue;
      lines(path, n, line, syntax, scope);
    }
  }

  // Every regular file of dir whose name ends with suffix, in name order.
  void dir(const std::string& dir, const std::string& suffix, Syntax syntax, const std::string& scope) {
    const auto names = m_ctx.list_optional(dir);
    if (!names) return;
    for (const auto& n : *names)
      if (n.size() > suffix.size() && n.ends_with(suffix)) file(sys::join(dir, n), syntax, scope);
  }

  // One setting; where and how its line is written (syntax "" and line 0 for the environment).
  void add(std::string name, std::string value, std::string kind, const std::string& source, int line,
           const std::string& scope, std::string syntax = "", bool alone = false, std::string written = "") {
    const bool owned = source != "environment" && m_ctx.sys().stat(source).uid == m_uid;
    m_facts.settings.push_back({std::move(name), std::move(value), std::move(kind), source, line, scope, owned,
                                std::move(syntax), alone, std::move(written)});
  }

 private:
  void variables(const std::string& path, int n, std::string_view line, const std::vector<lines::Assignment>& as,
                 const std::string& scope, Syntax syntax) {
    for (const auto& a : as)
      if (relevant_variable(a.name))
        add(a.name, a.value, "env", path, n, scope, syntax_name(syntax, path), lines::sets_one_thing(line));
  }
  void modules(const std::string& path, int n, std::string_view line, const std::vector<lines::Assignment>& as,
               const std::string& scope, Syntax syntax) {
    for (const auto& a : as)
      if (relevant_module(a.name))
        add(a.name, a.value, "module", path, n, scope, syntax_name(syntax, path),
            syntax == Syntax::modprobe && lines::sets_one_thing(line), lines::written_word(line, a.name));
  }

  void lines(const std::string& path, int n, std::string_view line, Syntax syntax, const std::string& scope) {
    switch (syntax) {
      case Syntax::shell:
        variables(path, n, line, lines::shell_assignments(line), scope, syntax);
        break;
      case Syntax::fish_csh:
        variables(path, n, line, lines::fish_or_csh_assignments(line), scope, syntax);
        break;
      case Syntax::plain:
        variables(path, n, line, lines::plain_assignments(line), scope, syntax);
        return;
      case Syntax::nccl:
        variables(path, n, line, lines::nccl_conf_assignments(line), scope, syntax);
        return;
      case Syntax::systemd:
        variables(path, n, line, lines::systemd_environment(line), scope, syntax);
        break;
      case Syntax::modprobe:
        modules(path, n, line, lines::modprobe_options(line), scope, syntax);
        return;
      case Syntax::grub:
        modules(path, n, line, lines::cmdline_params(lines::grub_cmdline(line)), scope, syntax);
        return;
      case Syntax::cmdline:
        modules(path, n, line, lines::cmdline_params(line), scope, syntax);
        return;
      case Syntax::commands:
        break;
    }
    // Any file that runs commands at start-up may run nvidia-smi.
    const auto smi = lines::nvidia_smi_settings(line);
    for (const auto& a : smi)
      add(a.name, a.value, "nvidia-smi", path, n, syntax == Syntax::systemd ? "service" : scope,
          syntax_name(syntax, path),
          syntax == Syntax::systemd && smi.size() == 1 && util::trim(line).starts_with("Exec"));
  }

  Context& m_ctx;
  snapshot::SettingsFacts& m_facts;
  std::set<std::string> m_seen;
  std::uint32_t m_uid;
};

void read_environment(Context& ctx, Reader& r) {
  for (const auto& name : ctx.sys().env_names())
    if (relevant_variable(name))
      if (const auto v = ctx.sys().env(name)) r.add(name, *v, "env", "environment", 0, "process");
}

void read_shell_files(Context& ctx, Reader& r) {
  const auto home = ctx.sys().env("HOME").value_or("");
  if (!home.empty() && home != "/") {
    for (const char* f : {".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshenv", ".zprofile", ".zshrc"})
      r.file(home + "/" + f, Syntax::shell, "shell");
    for (const char* f : {".config/fish/config.fish", ".cshrc", ".tcshrc"})
      r.file(home + "/" + f, Syntax::fish_csh, "shell");
    r.dir(home + "/.config/fish/conf.d", ".fish", Syntax::fish_csh, "shell");
  }
  r.file("/etc/environment", Syntax::plain, "system");
  for (const char* f : {"/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zsh/zshenv", "/etc/zshenv"})
    r.file(f, Syntax::shell, "system");
  r.dir("/etc/profile.d", ".sh", Syntax::shell, "system");
}

void read_environment_activation(Context& ctx, Reader& r, const snapshot::PythonFacts& python) {
  for (const auto& env : python.envs) {
    if (env.prefix.empty() || env.prefix == "/usr" || env.prefix == "/usr/local") continue;
    if (env.conda_meta) {
      r.dir(env.prefix + "/etc/conda/activate.d", ".sh", Syntax::shell, "conda");
      // `conda env config vars set` keeps its variables in conda-meta/state: {"env_vars": {…}}.
      const auto state_path = env.prefix + "/conda-meta/state";
      if (const auto text = ctx.read_optional(state_path, 1 << 20)) {
        const auto j = nlohmann::json::parse(*text, nullptr, false);
        if (j.is_object() && j.contains("env_vars") && j["env_vars"].is_object())
          for (const auto& [name, value] : j["env_vars"].items())
            if (relevant_variable(name) && value.is_string())
              r.add(name, value.get<std::string>(), "env", state_path, 0, "conda", "conda_state");
      }
    } else if (env.kind == "venv") {
      r.file(env.prefix + "/bin/activate", Syntax::shell, "venv");
    }
  }
}

void read_services(Context& ctx, Reader& r) {
  for (const char* f : {"/etc/systemd/system.conf", "/etc/systemd/user.conf"}) r.file(f, Syntax::systemd, "service");
  r.dir("/etc/systemd/system", ".service", Syntax::systemd, "service");
  if (const auto names = ctx.list_optional("/etc/systemd/system"))
    for (const auto& n : *names)
      if (n.ends_with(".service.d")) r.dir("/etc/systemd/system/" + n, ".conf", Syntax::systemd, "service");
  for (const char* d : {"/usr/lib/systemd/system", "/lib/systemd/system"})
    if (const auto names = ctx.list_optional(d))
      for (const auto& n : *names)
        if (n.starts_with("nvidia") && n.ends_with(".service")) r.file(sys::join(d, n), Syntax::systemd, "service");
  r.file("/etc/rc.local", Syntax::commands, "boot");
  r.file("/etc/crontab", Syntax::commands, "boot");
  r.dir("/etc/cron.d", "", Syntax::commands, "boot");
}

void read_nccl_conf(Context& ctx, Reader& r) {
  // NCCL reads NCCL_CONF_FILE, else ~/.nccl.conf, then /etc/nccl.conf (src/misc/param.cc).
  if (const auto f = ctx.sys().env("NCCL_CONF_FILE"); f && !f->empty()) {
    if (f->front() == '/') r.file(*f, Syntax::nccl, "nccl-conf");
  } else if (const auto home = ctx.sys().env("HOME"); home && !home->empty()) {
    r.file(*home + "/.nccl.conf", Syntax::nccl, "nccl-conf");
  }
  r.file("/etc/nccl.conf", Syntax::nccl, "nccl-conf");
}

void read_kernel_settings(Context& ctx, Reader& r) {
  for (const char* d :
       {"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d"})
    r.dir(d, ".conf", Syntax::modprobe, "module-load");
  if (const auto cmdline = ctx.read_optional("/proc/cmdline", 64 * 1024))
    for (const auto& a : lines::cmdline_params(*cmdline))
      if (relevant_module(a.name))
        r.add(a.name, a.value, "module", "/proc/cmdline", 1, "boot", "cmdline", false,
              lines::written_word(*cmdline, a.name));
  r.file("/etc/default/grub", Syntax::grub, "next-boot");
  r.file("/etc/kernel/cmdline", Syntax::cmdline, "next-boot");
}

// The running kernel's view of each module parameter set somewhere.
void read_module_params(Context& ctx, snapshot::SettingsFacts& facts) {
  std::set<std::string> names;
  for (const auto& s : facts.settings)
    if (s.kind == "module") names.insert(s.name);
  std::optional<std::string> nvidia_params;
  bool nvidia_params_read = false;
  for (const auto& name : names) {
    const auto dot = name.find('.');
    const auto module = name.substr(0, dot), param = name.substr(dot + 1);
    snapshot::ModuleParam p{name, ctx.sys().exists("/sys/module/" + module), false, "", ""};
    const auto path = "/sys/module/" + module + "/parameters/" + param;
    if (ctx.sys().exists(path)) {
      p.exists = true;
      p.source = path;
      if (const auto v = ctx.read_quiet(path, 4096)) p.value = std::string(util::trim(*v));
    } else if (module == "nvidia" && param.starts_with("NVreg_")) {
      // /proc/driver/nvidia/params: "EnableGpuFirmware: 18", one per line.
      if (!nvidia_params_read) {
        nvidia_params_read = true;
        nvidia_params = ctx.read_optional("/proc/driver/nvidia/params", 64 * 1024);
      }
      if (nvidia_params)
        for (const auto line : util::lines(*nvidia_params))
          if (const auto colon = line.find(':');
              colon != std::string_view::npos && util::trim(line.substr(0, colon)) == param.substr(6)) {
            p.exists = true;
            p.value = std::string(util::trim(line.substr(colon + 1)));
            p.source = "/proc/driver/nvidia/params";
          }
    }
    facts.module_params.push_back(p);
  }
}

// Whether bytes hold word as a whole string: NUL after it, and no identifier character before.
bool holds_word(const unsigned char* data, std::size_t size, const std::string& word) {
  const std::string needle = word + '\0';
  const std::string_view hay(reinterpret_cast<const char*>(data), size);
  for (auto at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1)) {
    const char before = at == 0 ? '\0' : hay[at - 1];
    if (!(std::isalnum(static_cast<unsigned char>(before)) || before == '_')) return true;
  }
  return false;
}

// The keys each PYTORCH_CUDA_ALLOC_CONF setting uses, looked up in every torch's c10 libraries
// (the allocator's parser compares each key with a string literal).
void read_allocator_keys(Context& ctx, snapshot::SettingsFacts& facts, const snapshot::PythonFacts& python) {
  std::set<std::string> keys;
  for (const auto& s : facts.settings)
    if (s.name == "PYTORCH_CUDA_ALLOC_CONF" || s.name == "PYTORCH_ALLOC_CONF")
      for (const auto item : util::split(s.value, ',')) {
        const auto key = util::trim(item.substr(0, item.find(':')));
        if (!key.empty() && key.size() <= 64) keys.insert(std::string(key));
      }
  if (keys.empty()) return;
  std::set<std::string> seen;
  for (const auto& env : python.envs)
    for (const auto& fw : env.frameworks) {
      if (fw.name != "torch" || fw.location.empty() || !seen.insert(fw.location).second) continue;
      snapshot::LibraryWords words{"torch", fw.location, {}, {}, {}};
      std::vector<std::shared_ptr<const sys::Blob>> blobs;
      for (const char* lib : {"libc10_cuda.so", "libc10.so"})
        if (auto blob = ctx.map_optional(fw.location + "/lib/" + lib)) {
          words.libraries.push_back(fw.location + "/lib/" + lib);
          blobs.push_back(std::move(blob));
        }
      if (blobs.empty()) continue;
      for (const auto& k : keys) {
        const bool found =
            std::any_of(blobs.begin(), blobs.end(), [&](const auto& b) { return holds_word(b->data(), b->size(), k); });
        (found ? words.present : words.absent).push_back(k);
      }
      facts.allocator_keys.push_back(std::move(words));
    }
}

}  // namespace

snapshot::SettingsFacts probe_settings(Context& ctx, const snapshot::PythonFacts& python) {
  snapshot::SettingsFacts facts;
  Reader r(ctx, facts);
  read_environment(ctx, r);
  read_shell_files(ctx, r);
  read_environment_activation(ctx, r, python);
  read_services(ctx, r);
  read_nccl_conf(ctx, r);
  read_kernel_settings(ctx, r);
  read_module_params(ctx, facts);
  read_allocator_keys(ctx, facts, python);
  return facts;
}

}  // namespace cudoctor::probe
