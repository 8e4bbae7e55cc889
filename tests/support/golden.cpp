#include "golden.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cudoctor::testing {

std::string check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(CUDOCTOR_GOLDEN_DIR) + "/" + name;
  if (const char* u = std::getenv("CUDOCTOR_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return "";
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return "no golden file " + path + " (run with CUDOCTOR_UPDATE_GOLDEN=1 to create it)";
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str() == actual) return "";
  return "output differs from " + path + " (CUDOCTOR_UPDATE_GOLDEN=1 rewrites it; review the diff)\n--- actual ---\n" +
         actual;
}

}  // namespace cudoctor::testing
