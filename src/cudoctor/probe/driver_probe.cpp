#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cudoctor/probe/probes.hpp"
#include "cudoctor/sys/paths.hpp"
#include "cudoctor/util/strings.hpp"
#include "cudoctor/util/version.hpp"

namespace cudoctor::probe {
namespace {

// The first dotted number of two or three parts on the NVRM line: the driver version.
std::string find_version(std::string_view line) {
  for (const auto w : util::split_ws(line))
    if (w.find('.') != std::string_view::npos && util::Version::parse(w) && util::Version::parse(w)->parts.size() >= 2)
      return std::string(w);
  return "";
}

bool may(const sys::Identity& id, const sys::FileStat& st, std::uint32_t owner_bit) {
  if (id.uid == 0) return true;  // CAP_DAC_OVERRIDE
  if (st.uid == id.uid) return st.mode & owner_bit;
  const bool in_group = st.gid == id.gid || std::find(id.groups.begin(), id.groups.end(), st.gid) != id.groups.end();
  if (in_group) return st.mode & (owner_bit >> 3);
  return st.mode & (owner_bit >> 6);
}

snapshot::NodeType node_type(sys::FileType t) {
  using snapshot::NodeType;
  switch (t) {
    case sys::FileType::missing:
      return NodeType::missing;
    case sys::FileType::regular:
      return NodeType::file;
    case sys::FileType::directory:
      return NodeType::directory;
    case sys::FileType::symlink:
      return NodeType::symlink;
    case sys::FileType::char_device:
      return NodeType::char_device;
    case sys::FileType::block_device:
      return NodeType::block_device;
    case sys::FileType::fifo:
      return NodeType::fifo;
    case sys::FileType::socket:
      return NodeType::socket;
    case sys::FileType::other:
      return NodeType::other;
  }
  return NodeType::other;
}

}  // namespace

snapshot::KernelModule probe_kernel_module(Context& ctx) {
  snapshot::KernelModule km;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (…)"
  const std::string proc = "/proc/driver/nvidia/version";
  if (const auto text = ctx.read_optional(proc, 64 * 1024)) {
    for (const auto line : util::lines(*text)) {
      if (!line.starts_with("NVRM version:")) continue;
      km.version_line = util::printable(util::trim(line), 200);
      km.version = find_version(line.substr(13));
      km.version_source = proc;
      km.flavor = line.find("Open Kernel Module") != std::string_view::npos ? "open" : "proprietary";
      break;
    }
    if (km.version.empty()) ctx.unreadable(proc, "no \"NVRM version:\" line with a version number");
  }
  if (km.version.empty()) {
    const std::string sysv = "/sys/module/nvidia/version";
    if (const auto text = ctx.read_optional(sysv, 4096)) {
      const auto v = util::trim(*text);
      if (util::Version::parse(v)) {
        km.version = v;
        km.version_source = sysv;
      } else {
        ctx.unreadable(sysv, fmt::format("not a version: '{}'", util::printable(v, 40)));
      }
    }
  }
  return km;
}

void probe_nvidia_modprobe(Context& ctx, snapshot::DriverFacts& driver) {
  for (const char* p : {"/usr/bin/nvidia-modprobe", "/usr/sbin/nvidia-modprobe", "/bin/nvidia-modprobe"}) {
    const auto st = ctx.sys().stat(p);
    if (st.type != sys::FileType::regular) continue;
    driver.nvidia_modprobe = p;
    driver.nvidia_modprobe_setuid = st.uid == 0 && (st.mode & 04000);
    return;
  }
}

std::vector<snapshot::DeviceNode> probe_device_nodes(Context& ctx) {
  const auto& sys = ctx.sys();
  const auto id = sys.identity();
  std::vector<std::string> paths;
  if (const auto names = ctx.list_optional("/dev")) {
    for (const auto& n : *names)
      if (n.starts_with("nvidia") && sys.stat("/dev/" + n).type != sys::FileType::directory)
        paths.push_back("/dev/" + n);
  }
  // The nodes every CUDA process opens: listed even when absent, so their absence is a fact.
  if (sys.exists("/dev/dxg")) paths.emplace_back("/dev/dxg");  // WSL2's GPU device
  for (const char* must : {"/dev/nvidiactl", "/dev/nvidia-uvm"})
    if (std::find(paths.begin(), paths.end(), must) == paths.end()) paths.emplace_back(must);
  std::vector<snapshot::DeviceNode> nodes;
  for (const auto& p : paths) {
    const auto st = sys.stat(p);
    snapshot::DeviceNode n;
    n.path = p;
    n.type = node_type(st.type);
    if (st.type != sys::FileType::missing) {
      n.major = st.rdev_major;
      n.minor = st.rdev_minor;
      n.mode = st.mode;
      n.uid = st.uid;
      n.gid = st.gid;
      n.can_read = may(id, st, 0400);
      n.can_write = may(id, st, 0200);
    }
    nodes.push_back(std::move(n));
  }
  // Numbers in order: /dev/nvidia2 before /dev/nvidia10.
  const auto key = [](const std::string& p) {
    auto stem_end = p.size();
    while (stem_end > 0 && std::isdigit(static_cast<unsigned char>(p[stem_end - 1]))) --stem_end;
    const auto digits = p.substr(stem_end);
    return std::make_pair(p.substr(0, stem_end), digits.empty() ? -1L : std::stol(digits.substr(0, 9)));
  };
  std::sort(nodes.begin(), nodes.end(), [&](const auto& a, const auto& b) { return key(a.path) < key(b.path); });
  return nodes;
}

}  // namespace cudoctor::probe
