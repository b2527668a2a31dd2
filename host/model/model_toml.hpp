// A model from a TOML table (`preset = "..."` and/or fields): the [model] table of a model file
// (load_model_toml) or of a sweep file (sweep/sweep_file.hpp).
#pragma once
#include <string>

#include <toml++/toml.h>

#include "model/model_spec.hpp"

namespace lumos::model {

// A TOML file's root table; `kind` names what the file should be ("model", "sweep") in errors.
// Throws InputError for a missing file or one that does not parse (file:line:column).
toml::table parse_toml_file(const std::string& path, const std::string& kind);

// `path` names the file in errors (with the line of the field at fault). Throws InputError for
// an unknown field, a bad value or an empty table.
ModelSpec model_from_toml(const toml::table& t, const std::string& path);

}  // namespace lumos::model
