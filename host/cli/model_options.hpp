// The model a command prices: a preset (--model) or a TOML file (--model-file), with per-field
// overrides (--layers, --hidden, ...). Shared by `lumos estimate`, `generate` and `sweep`.
#pragma once
#include <cxxopts.hpp>

#include "model/model_spec.hpp"

namespace lumos::cli {

void model_options(cxxopts::Options& o, const char* default_model = "gpt3-15b");

// The model the options name; `base` (e.g. a sweep file's model) when they name none, with the
// field overrides applied to it. Throws InputError for both --model and --model-file, an unknown
// preset or a bad override.
model::ModelSpec model_from(const cxxopts::ParseResult& a, const model::ModelSpec* base = nullptr);

}  // namespace lumos::cli
