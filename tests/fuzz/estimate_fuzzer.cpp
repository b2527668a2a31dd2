// libFuzzer target for the model-driven estimate path: a TOML model file, then a layout, checked
// and priced, and the iteration's graph counted (and built and replayed when it is small); see
// fuzz_cases.hpp for the input format. Build and run: scripts/fuzz.sh estimate_fuzzer 600
#include <unistd.h>

#include <cstdlib>

#include "fuzz_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/lumos_estimate_fuzzer_" +
           std::to_string(getpid()) + ".toml";
  }();
  lumos::fuzz::estimate_case(data, size, path);
  return 0;
}
