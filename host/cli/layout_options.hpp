// The model, layout, GPU and network options shared by `lumos estimate`, `generate` and `carbon`
// (the model's own in model_options.hpp), and the estimate request they describe.
#pragma once
#include <cxxopts.hpp>

#include "estimate/estimate.hpp"

namespace lumos::cli {

void layout_options(cxxopts::Options& o);

// Throws InputError for a bad value (dtype, stack switch, bandwidth, GPUs per node).
estimate::EstimateRequest request_from(const cxxopts::ParseResult& a);

}  // namespace lumos::cli
