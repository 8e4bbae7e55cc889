#pragma once
// Names from the pci.ids database (the pciutils format: vendor lines, tab-indented device
// lines, two-tab subsystem lines). Only the vendors asked for are kept.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

namespace cudoctor::probe {

class PciIds {
 public:
  // Parses text, keeping the entries of the given vendors (and every vendor's name).
  static PciIds parse(std::string_view text, const std::set<std::uint16_t>& vendors);

  std::string vendor(std::uint16_t vendor) const;
  std::string device(std::uint16_t vendor, std::uint16_t device) const;
  std::string subsystem(std::uint16_t vendor, std::uint16_t device, std::uint16_t sub_vendor,
                        std::uint16_t sub_device) const;

 private:
  std::map<std::uint16_t, std::string> m_vendors;
  std::map<std::pair<std::uint16_t, std::uint16_t>, std::string> m_devices;
  std::map<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t, std::uint16_t>, std::string> m_subsystems;
};

}  // namespace cudoctor::probe
