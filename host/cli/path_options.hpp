// The paths a command's options name, checked against each other before any work: no output may
// be an input of the same run or another output of it (common/path_identity.hpp).
#pragma once
#include <cxxopts.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "common/path_identity.hpp"

namespace lumos::cli {

// An option naming a path: for an input, what it is ("the fleet file"); for an output, the flag.
struct PathOption {
  const char* key;
  const char* role;
};

// The given options' paths, with their roles; options not given are left out.
inline std::vector<common::RolePath> paths_of(const cxxopts::ParseResult& a,
                                              std::initializer_list<PathOption> options) {
  std::vector<common::RolePath> out;
  for (const PathOption& p : options)
    if (a.count(p.key)) out.push_back({a[p.key].as<std::string>(), p.role});
  return out;
}

// Inputs many commands take.
inline constexpr PathOption kModelFileInput{"model-file", "the model file (--model-file)"};
inline constexpr PathOption kDbInput{"db", "the kernels_db folder (--db)"};

// Throws InputError when an output among `outputs` is an input among `inputs` (or `extra`, paths
// not given as options, such as a sweep file's trace) or another output.
inline void check_paths(const std::string& who, const cxxopts::ParseResult& a,
                        std::initializer_list<PathOption> inputs,
                        std::initializer_list<PathOption> outputs,
                        std::vector<common::RolePath> extra = {}) {
  std::vector<common::RolePath> in = paths_of(a, inputs);
  in.insert(in.end(), extra.begin(), extra.end());
  common::check_outputs_distinct(who, in, paths_of(a, outputs));
}

}  // namespace lumos::cli
