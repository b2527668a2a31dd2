#include "whatif/traced_passes.hpp"

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos::whatif {

TracedPasses traced_passes(const JobStructure& js, const TracedDegrees& given) {
  const std::string where = "lumos whatif: ";
  LUMOS_EXPECT(js.forward.period > 0,
               where +
                   "this edit needs the traced layers, and the trace shows no repeating layer "
                   "pattern (see --describe)");
  LUMOS_EXPECT(js.pp > 0, where + "this edit needs the pipeline stages: " + js.pp_from);
  TracedPasses p;
  // The first forward stretch of the first stage is one pass of one model chunk; every
  // micro-batch runs each chunk forward once (no full recomputation), and the first stage sends
  // and receives 2M(2V - 1) pipeline messages for M micro-batches over V chunks.
  const int64_t chunk_layers = js.forward.first_repeats, instances = js.forward.instances;
  p.found = strprintf("%lld forward layers on rank %d, %lld in the first pass",
                      static_cast<long long>(instances), js.described_rank,
                      static_cast<long long>(chunk_layers));
  LUMOS_EXPECT(chunk_layers > 0 && instances % chunk_layers == 0,
               where + "the trace's " + p.found +
                   " do not make whole passes (a pass shows its layers when it runs two or more)");
  p.chunk_instances = chunk_layers;
  p.passes = instances / chunk_layers;  // micro-batches x chunks
  p.microbatches = p.passes;
  if (given.interleave > 0) {
    LUMOS_EXPECT(p.passes % given.interleave == 0,
                 strprintf("%s--traced interleave=%d does not divide the trace's %s", where.c_str(),
                           given.interleave, p.found.c_str()));
    p.interleave = given.interleave;
    p.microbatches = p.passes / p.interleave;
  } else if (js.pp > 1) {
    const int64_t half = js.p2p_kernels / 2;
    const int64_t passes = p.passes, microbatches = 2 * passes - half;
    LUMOS_EXPECT(js.p2p_kernels % 2 == 0 && microbatches >= 1 && passes % microbatches == 0 &&
                     half == microbatches * (2 * (passes / microbatches) - 1),
                 strprintf("%s%u pipeline sends and receives on rank %d do not fit a 1F1B or "
                           "interleaved schedule of the trace's %s (--traced interleave=V says "
                           "what it ran)",
                           where.c_str(), js.p2p_kernels, js.described_rank, p.found.c_str()));
    p.microbatches = microbatches;
    p.interleave = static_cast<int>(passes / microbatches);
  }
  p.layers = chunk_layers * p.interleave * js.pp;
  p.layers_from = strprintf("%lld per chunk x %d chunks x %d stages",
                            static_cast<long long>(chunk_layers), p.interleave, js.pp);
  if (given.layers > 0) {
    // A traced instance may hold several layers (a block of a sliding- and a full-attention
    // layer): the user's count, a whole number of instances per chunk, wins.
    const int64_t chunks = static_cast<int64_t>(p.interleave) * js.pp;
    LUMOS_EXPECT(given.layers % (chunk_layers * chunks) == 0,
                 strprintf("%s--traced layers=%lld is not a whole number of the trace's %lld "
                           "layer instances per chunk x %lld chunks",
                           where.c_str(), static_cast<long long>(given.layers),
                           static_cast<long long>(chunk_layers), static_cast<long long>(chunks)));
    if (given.layers != p.layers)
      p.layers_from = strprintf("--traced layers=%lld (the trace repeats %s)",
                                static_cast<long long>(given.layers), p.layers_from.c_str());
    p.layers = given.layers;
  }
  return p;
}

}  // namespace lumos::whatif
