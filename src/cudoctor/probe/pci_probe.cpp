#include <fmt/format.h>

#include <cctype>
#include <set>

#include "cudoctor/probe/pci_ids.hpp"
#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

constexpr const char* k_bus = "/sys/bus/pci/devices";
// pciutils installs the database in one of these, depending on the distribution.
constexpr const char* k_pci_ids_paths[] = {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids",
                                           "/usr/share/pci.ids"};

// Reads a sysfs attribute that holds a hex number ("0x10de\n"); records garbage.
std::optional<std::uint64_t> read_hex(Context& ctx, const std::string& path) {
  const auto text = ctx.read_optional(path, 4096);
  if (!text) return std::nullopt;
  const auto v = util::parse_uint(*text, 0);
  if (!v || !util::starts_with(util::trim(*text), "0x"))
    ctx.unreadable(path, fmt::format("not a hex number: '{}'", util::printable(util::trim(*text), 40)));
  return v;
}

std::string read_word(Context& ctx, const std::string& path) {
  const auto text = ctx.read_optional(path, 4096);
  return text ? std::string(util::trim(*text)) : "";
}

int read_int(Context& ctx, const std::string& path) {
  const auto text = ctx.read_optional(path, 4096);
  if (!text) return 0;
  const auto v = util::parse_uint(*text);
  if (!v || *v > 1024) {
    ctx.unreadable(path, fmt::format("not a link width: '{}'", util::printable(util::trim(*text), 40)));
    return 0;
  }
  return static_cast<int>(*v);
}

// "0000:00:01.0": a PCI function's name in sysfs (a host bridge's directory is "pci0000:00").
bool pci_function_name(std::string_view name) {
  if (name.size() != 12 || name[4] != ':' || name[7] != ':' || name[10] != '.') return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (i != 4 && i != 7 && i != 10 && !std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

// The port the device's link goes to: its parent in /sys/devices, when that is a PCI function.
void read_upstream_port(Context& ctx, const std::string& dir, snapshot::PciDevice& d) {
  const auto real = ctx.sys().canonical(dir);
  if (!real) return;
  const auto parent = sys::dirname(*real);
  const auto name = sys::basename(parent);
  if (!pci_function_name(name)) return;
  d.port_address = name;
  d.port_max_link_speed = read_word(ctx, parent + "/max_link_speed");
  d.port_max_link_width = read_int(ctx, parent + "/max_link_width");
}

}  // namespace

PciScan probe_pci(Context& ctx) {
  PciScan scan;
  const auto& sys = ctx.sys();
  const auto entries = ctx.list_optional(k_bus);
  if (!entries) {
    // A bus directory without its devices directory is as unreadable as a locked one.
    if (sys.exists("/sys/bus/pci") && !ctx.is_unreadable(k_bus)) ctx.unreadable(k_bus, "No such file or directory");
    return scan;
  }
  scan.listed = true;
  for (const auto& name : *entries) {
    const auto dir = sys::join(k_bus, name);
    const auto cls = read_hex(ctx, dir + "/class");
    // PCI class 0x03: display controller (VGA 0x0300, XGA 0x0301, 3D 0x0302, other 0x0380).
    if (!cls || (*cls >> 16) != 0x03) continue;
    snapshot::PciDevice d;
    d.address = name;
    d.class_code = static_cast<std::uint32_t>(*cls);
    d.vendor_id = static_cast<std::uint16_t>(read_hex(ctx, dir + "/vendor").value_or(0));
    d.device_id = static_cast<std::uint16_t>(read_hex(ctx, dir + "/device").value_or(0));
    d.subsystem_vendor_id = static_cast<std::uint16_t>(read_hex(ctx, dir + "/subsystem_vendor").value_or(0));
    d.subsystem_device_id = static_cast<std::uint16_t>(read_hex(ctx, dir + "/subsystem_device").value_or(0));
    if (sys.stat(dir + "/driver", false).type == sys::FileType::symlink) {
      if (const auto target = sys.read_link(dir + "/driver")) d.driver = sys::basename(*target);
    }
    d.current_link_speed = read_word(ctx, dir + "/current_link_speed");
    d.max_link_speed = read_word(ctx, dir + "/max_link_speed");
    d.current_link_width = read_int(ctx, dir + "/current_link_width");
    d.max_link_width = read_int(ctx, dir + "/max_link_width");
    d.runtime_status = read_word(ctx, dir + "/power/runtime_status");
    d.boot_vga = read_word(ctx, dir + "/boot_vga") == "1";
    d.power_state = read_word(ctx, dir + "/power_state");
    d.runtime_control = read_word(ctx, dir + "/power/control");
    if (d.vendor_id == 0x10de) read_upstream_port(ctx, dir, d);
    scan.display.push_back(std::move(d));
  }
  if (scan.display.empty()) return scan;

  std::set<std::uint16_t> vendors;
  for (const auto& d : scan.display) vendors.insert(d.vendor_id);
  for (const char* path : k_pci_ids_paths) {
    if (!sys.exists(path)) continue;
    const auto text = ctx.read_optional(path, 16 << 20);
    if (!text) break;
    const auto ids = PciIds::parse(*text, vendors);
    for (auto& d : scan.display) {
      d.vendor_name = ids.vendor(d.vendor_id);
      d.device_name = ids.device(d.vendor_id, d.device_id);
      d.subsystem_name = ids.subsystem(d.vendor_id, d.device_id, d.subsystem_vendor_id, d.subsystem_device_id);
    }
    break;
  }
  return scan;
}

}  // namespace cudoctor::probe
