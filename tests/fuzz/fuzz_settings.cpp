// libFuzzer target: the readers of settings on any bytes, line by line: shell, fish/csh,
// /etc/environment, systemd, modprobe.d, kernel and grub command lines, nvidia-smi commands,
// and the CUBLAS_WORKSPACE_CONFIG and PYTORCH_CUDA_ALLOC_CONF value readers.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "cudoctor/kb/settings.hpp"
#include "cudoctor/probe/setting_lines.hpp"
#include "cudoctor/rules/tune_values.hpp"

namespace {

const cudoctor::kb::Settings& settings() {
  static const auto s = [] {
    std::ifstream in(CUDOCTOR_DATA_DIR "/settings.json");
    std::stringstream text;
    text << in.rdbuf();
    const auto j = nlohmann::json::parse(text.str());
    return cudoctor::kb::parse_settings("settings.json", &j);
  }();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace lines = cudoctor::probe::lines;
  namespace tune = cudoctor::rules::tune;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const cudoctor::snapshot::LibraryWords torch{"torch", "/t", {"/t/lib/libc10_cuda.so"}, {"max_split_size_mb"}, {"x"}};
  std::size_t start = 0;
  while (start <= all.size()) {
    auto end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    const auto line = all.substr(start, end - start);
    std::size_t n = lines::shell_assignments(line).size() + lines::fish_or_csh_assignments(line).size() +
                    lines::plain_assignments(line).size() + lines::systemd_environment(line).size() +
                    lines::modprobe_options(line).size() + lines::cmdline_params(line).size() +
                    lines::nvidia_smi_settings(line).size() + lines::grub_cmdline(line).size();
    const auto w = tune::read_workspace(line);
    n += w.pairs.size() + tune::read_alloc_conf(line, settings(), nullptr).size() +
         tune::read_alloc_conf(line, settings(), &torch).size() + tune::bytes_text(w.bytes).size();
    (void)tune::read_int(line);
    if (n == static_cast<std::size_t>(-1)) __builtin_trap();  // keeps the calls
    start = end + 1;
  }
  return 0;
}
