#include <fmt/format.h>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

// The modules whose state decides whether CUDA can reach a GPU.
constexpr const char* k_modules[] = {"nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nouveau"};

// modprobe treats '-' and '_' in module names alike (kmod's modname normalisation).
std::string module_name(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c == '-') c = '_';
  return out;
}

bool is_watched(const std::string& name) {
  for (const char* m : k_modules)
    if (name == m) return true;
  return false;
}

// modprobe.d(5): configuration directories, in kmod's order.
constexpr const char* k_modprobe_dirs[] = {"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
                                           "/lib/modprobe.d", "/usr/lib/modprobe.d"};

void scan_modprobe_file(Context& ctx, const std::string& path, snapshot::DriverFacts& driver) {
  const auto text = ctx.read_optional(path, 1 << 20);
  if (!text) {
    if (ctx.is_unreadable(path)) driver.blacklist_sources_unreadable.push_back(path);
    return;
  }
  int n = 0;
  for (const auto raw : util::lines(*text)) {
    ++n;
    const auto line = util::trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const auto words = util::split_ws(line);
    if (words.size() < 2) continue;
    const auto name = module_name(words[1]);
    if (!is_watched(name)) continue;
    // "blacklist M" stops loading by alias only; "install M /bin/false" (or /bin/true) stops
    // every load, explicit modprobe included.
    const bool blocks_install = words[0] == "install" && words.size() >= 3 &&
                                (words[2] == "/bin/false" || words[2] == "/bin/true" || words[2] == "/usr/bin/false" ||
                                 words[2] == "/usr/bin/true");
    if (words[0] == "blacklist" || blocks_install)
      driver.blacklists.push_back({name, fmt::format("{}:{}", path, n), std::string(line)});
  }
}

void scan_cmdline(Context& ctx, snapshot::DriverFacts& driver) {
  const auto text = ctx.read_optional("/proc/cmdline", 64 * 1024);
  if (!text) {
    if (ctx.is_unreadable("/proc/cmdline")) driver.blacklist_sources_unreadable.emplace_back("/proc/cmdline");
    return;
  }
  for (const auto word : util::split_ws(util::trim(*text))) {
    const auto eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = word.substr(0, eq);
    // modprobe.blacklist= (kmod), module_blacklist= (kernel), rd.driver.blacklist= (dracut).
    if (key != "modprobe.blacklist" && key != "module_blacklist" && key != "rd.driver.blacklist") continue;
    for (const auto m : util::split(word.substr(eq + 1), ','))
      if (is_watched(module_name(m))) driver.blacklists.push_back({module_name(m), "/proc/cmdline", std::string(word)});
  }
}

}  // namespace

void probe_modules(Context& ctx, snapshot::DriverFacts& driver) {
  for (const char* m : k_modules) driver.modules.push_back({m, false, ""});
  // /proc/modules: "name size refcount deps state address [taint]".
  if (const auto text = ctx.read_optional("/proc/modules", 4 << 20)) {
    driver.modules_listed = true;
    for (const auto line : util::lines(*text)) {
      const auto f = util::split_ws(line);
      if (f.empty()) continue;
      const auto name = module_name(f[0]);
      for (auto& m : driver.modules)
        if (m.name == name) {
          m.loaded = true;
          m.state = f.size() > 4 ? std::string(f[4]) : "";
        }
    }
  }
  // Built-in or listed in sysfs even without /proc/modules (some kernels, containers).
  for (auto& m : driver.modules)
    if (!m.loaded && ctx.sys().exists("/sys/module/" + m.name + "/initstate")) {
      m.loaded = true;
      m.state = "Live";
    }
  for (const char* dir : k_modprobe_dirs) {
    const auto names = ctx.list_optional(dir);
    if (!names) {
      if (ctx.is_unreadable(dir)) driver.blacklist_sources_unreadable.emplace_back(dir);
      continue;
    }
    for (const auto& n : *names)
      if (n.size() > 5 && n.ends_with(".conf")) scan_modprobe_file(ctx, sys::join(dir, n), driver);
  }
  scan_cmdline(ctx, driver);
}

std::vector<std::string> probe_module_files(Context& ctx, const std::string& kernel) {
  std::vector<std::string> found;
  if (kernel.empty() || kernel.find('/') != std::string::npos) return found;
  const auto base = "/lib/modules/" + kernel;
  // Where distributions and DKMS put the module: updates/dkms (DKMS), extra (RPM kmods),
  // kernel/drivers/video (Debian), kernel/nvidia-NNN (Ubuntu's signed prebuilt modules).
  std::vector<std::string> dirs = {base + "/updates/dkms", base + "/updates", base + "/extra",
                                   base + "/kernel/drivers/video", base + "/nvidia"};
  if (const auto names = ctx.list_optional(base + "/kernel"))
    for (const auto& n : *names)
      if (n.starts_with("nvidia")) dirs.push_back(base + "/kernel/" + n);
  for (const auto& d : dirs) {
    const auto names = ctx.list_optional(d);
    if (!names) continue;
    for (const auto& n : *names)
      if (n.starts_with("nvidia.ko")) found.push_back(sys::join(d, n));
  }
  return found;
}

}  // namespace cudoctor::probe
