// A sweep described in a TOML file, for anything larger than a few flags: an optional [model]
// table (as in a model file) and a [sweep] table whose keys are `lumos sweep`'s options with '_'
// for '-' (tp, pp, gpus, nic_bandwidth, objectives, ...). A value is a string in the axis syntax
// ("64..1024"), a number, or an array of them. Options given on the command line win.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.hpp"

namespace lumos::sweep {

struct SweepFile {
  std::optional<model::ModelSpec> model;
  std::map<std::string, std::string> options;  // option name (with '-') -> value as on the CLI
};

// `known`: the option names the file may set. Throws InputError for a file that does not parse
// (file:line:column), an unknown table or key (file:line, with the keys allowed), or a value of
// the wrong type.
SweepFile load_sweep_file(const std::string& path, const std::vector<std::string>& known);

}  // namespace lumos::sweep
