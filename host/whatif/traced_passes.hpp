// The passes of a traced job (docs/design.md "Trace-driven what-ifs"): how many layers a model
// chunk runs, how many chunks a stage holds (the interleaving) and how many micro-batches run,
// from the repeating layer pattern of the described rank and its pipeline sends and receives.
// It needs no model: the traced layer count of a `--layers` edit comes from here, and the
// model's configuration (traced_config.hpp) builds on it.
#pragma once
#include <cstdint>
#include <string>

#include "whatif/job_structure.hpp"

namespace lumos::whatif {

struct TracedPasses {
  int64_t chunk_instances = 0;  // layer instances in one pass of one model chunk
  int64_t passes = 0;           // micro-batches x chunks, forward, on the described rank
  int64_t microbatches = 0;
  int interleave = 1;
  int64_t layers = 0;       // chunk_instances x interleave x pp, or what --traced layers= says
  std::string found;        // "N forward layers on rank R, M in the first pass"
  std::string layers_from;  // how `layers` was found, for the report
};

// InputError (one line) when the trace shows no repeating layers or pipeline stages, its
// forward layers do not make whole passes, or its sends and receives fit no 1F1B or interleaved
// schedule; `given` (--traced) fixes the interleaving and the layer count.
TracedPasses traced_passes(const JobStructure& js, const TracedDegrees& given);

}  // namespace lumos::whatif
