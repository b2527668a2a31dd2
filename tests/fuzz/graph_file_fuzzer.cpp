// libFuzzer target for the .lgraph reader: any bytes either load as a graph that replays, or are
// rejected with an InputError (see fuzz_cases.hpp: inputs are resealed so that mutations get past
// the checksum). Build and run: scripts/fuzz.sh graph_file_fuzzer 600
#include "fuzz_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lumos::fuzz::graph_file_case(data, size);
  return 0;
}
