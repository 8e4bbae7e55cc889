// Replays a fuzz target's corpus without libFuzzer: every file under each directory (or each
// file) named on the command line goes to LLVMFuzzerTestOneInput, the entry point the
// libFuzzer build of scripts/fuzz.sh calls. Built with the default compiler, so ctest checks
// the corpora (crashes found once stay fixed) under every build, the sanitizer one included.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
void replay(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  std::printf("%s (%zu bytes)\n", p.c_str(), bytes.size());
  std::fflush(stdout);  // the last name printed is the input that crashed
  (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) replay(f), ++n;
  }
  std::printf("%zu inputs replayed\n", n);
  return n == 0 ? 1 : 0;  // an empty or missing corpus is a mistake, not a pass
}
