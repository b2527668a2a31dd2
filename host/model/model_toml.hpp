// A model from a TOML table (`preset = "..."` and/or fields): the [model] table of a model file
// (load_model_toml) or of a sweep file (sweep/sweep_file.hpp).
#pragma once
#include <string>

#include <toml++/toml.h>

#include "model/model_spec.hpp"

namespace lumos::model {

// `path` names the file in errors (with the line of the field at fault). Throws InputError for
// an unknown field, a bad value or an empty table.
ModelSpec model_from_toml(const toml::table& t, const std::string& path);

}  // namespace lumos::model
