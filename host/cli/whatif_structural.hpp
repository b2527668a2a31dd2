// lumos whatif's structural edits (--layers, --pp, --hidden, ...): their options' ranges and
// the run that reads them, edits the traced job (estimate/trace_structural.hpp) and renders it.
#pragma once
#include <cxxopts.hpp>

#include <cstdint>

#include "cli/count_options.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/load_input.hpp"

namespace lumos::cli {

// The ranges model::validate and model::check_layout accept.
constexpr int64_t kMaxDegree = int64_t{1} << 16, kMaxSize = int64_t{1} << 24;
constexpr CountOption kDp{"dp", 1, kMaxDegree}, kLayers{"layers", 1, kMaxSize},
    kHidden{"hidden", 1, kMaxSize}, kFfn{"ffn", 1, kMaxSize}, kHeads{"heads", 1, kMaxSize},
    kSeq{"seq", 1, kMaxSize}, kTp{"tp", 1, kMaxDegree}, kPp{"pp", 1, kMaxDegree},
    kInterleave{"interleave", 1, kMaxDegree}, kMbs{"mbs", 1, kMaxSize}, kGbs{"gbs", 1, kMaxSize};

constexpr const char* kStructuralFlags[] = {"layers", "hidden", "ffn",        "heads", "seq",
                                            "tp",     "pp",     "interleave", "mbs",   "gbs"};

// Runs a structural what-if of `in` as the options ask; InputError (one line) on bad input.
int run_structural(const cxxopts::ParseResult& a, const graph::LoadedInput& in,
                   const estimate::WhatifRequest& w);

}  // namespace lumos::cli
