// Whether two paths name one file: the same device and inode when both exist (through symbolic
// and hard links), else the same absolute path once normalised (a file not yet written cannot be
// another by inode). Commands check their outputs against their inputs and each other with it
// before any work, so that no run overwrites what it reads or writes one file twice
// (docs/design.md, "Interfaces").
#pragma once
#include <string>
#include <vector>

namespace lumos::common {

// A path a command reads or writes, with what it is to the command: for an input a noun phrase
// ("the input trace", "the fleet file"), for an output the option that names it ("-o").
struct RolePath {
  std::string path;
  std::string role;
};

// Whether a and b are one file (or folder), as above.
bool same_file(const std::string& a, const std::string& b);

// Throws InputError, one line naming both, when an output is an input, a file directly inside an
// input folder (one that exists, or a new *.json / *.json.gz one in a folder of JSON files: rank
// traces, a kernels_db),
// or another output: "WHO: output t.json (-o) is the input trace t.json; choose
// another path". Empty paths and "-" (standard input or output) are skipped.
void check_outputs_distinct(const std::string& who, const std::vector<RolePath>& inputs,
                            const std::vector<RolePath>& outputs);

}  // namespace lumos::common
