#include "cudoctor/probe/pci_ids.hpp"

#include "cudoctor/util/strings.hpp"

namespace cudoctor::probe {
namespace {

std::optional<std::uint16_t> hex4(std::string_view s) {
  if (s.size() != 4) return std::nullopt;
  const auto v = util::parse_uint(s, 16);
  if (!v) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

}  // namespace

PciIds PciIds::parse(std::string_view text, const std::set<std::uint16_t>& vendors) {
  PciIds ids;
  // The current vendor block (when kept) and device; -1 for none. Plain ints, not
  // optionals: g++ 12 warns falsely about optionals assigned in a loop.
  int vendor = -1;
  int device = -1;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == 'C' && line.size() > 1 && line[1] == ' ') break;  // device classes follow the vendors
    if (line[0] != '\t') {
      // "10de  NVIDIA Corporation"
      device = -1;
      vendor = -1;
      const auto id = hex4(line.substr(0, 4));
      if (!id || line.size() < 6) continue;
      ids.m_vendors[*id] = std::string(util::trim(line.substr(4)));
      if (vendors.count(*id)) vendor = *id;
      continue;
    }
    if (vendor < 0) continue;
    const auto v = static_cast<std::uint16_t>(vendor);
    if (line.size() > 1 && line[1] != '\t') {
      // "\t2330  GH100[H100 SXM5 80GB]"
      const auto id = hex4(line.substr(1, 4));
      device = id ? *id : -1;
      if (id && line.size() > 6) ids.m_devices[{v, *id}] = std::string(util::trim(line.substr(5)));
      continue;
    }
    if (device < 0) continue;
    const auto d = static_cast<std::uint16_t>(device);
    // "\t\t1028 0b1a  GeForce RTX 4060 Laptop GPU" (subvendor subdevice, two tabs)
    const auto sv = hex4(line.substr(2, 4));
    const auto sd = line.size() > 11 ? hex4(line.substr(7, 4)) : std::nullopt;
    if (sv && sd && line.size() > 12) ids.m_subsystems[{v, d, *sv, *sd}] = std::string(util::trim(line.substr(11)));
  }
  return ids;
}

std::string PciIds::vendor(std::uint16_t vendor) const {
  const auto it = m_vendors.find(vendor);
  return it == m_vendors.end() ? "" : it->second;
}

std::string PciIds::device(std::uint16_t vendor, std::uint16_t device) const {
  const auto it = m_devices.find({vendor, device});
  return it == m_devices.end() ? "" : it->second;
}

std::string PciIds::subsystem(std::uint16_t vendor, std::uint16_t device, std::uint16_t sub_vendor,
                              std::uint16_t sub_device) const {
  const auto it = m_subsystems.find({vendor, device, sub_vendor, sub_device});
  return it == m_subsystems.end() ? "" : it->second;
}

}  // namespace cudoctor::probe
