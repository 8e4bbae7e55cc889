#pragma once
// PCI bus ids as the vendor libraries write them ("00000000:1B:00.0", NVML and the driver
// API) turned into the form sysfs writes ("0000:1b:00.0"), so they match the PCI probe's.
#include <cstdio>
#include <string>

namespace cudoctor::runtime {

// The sysfs form of a bus id; what does not parse as one is returned as it is.
inline std::string sysfs_bus_id(const char* id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return id;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain & 0xffff, bus, dev, fn);
  return buf;
}

}  // namespace cudoctor::runtime
