#include "model/parallel_config.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace lumos::model {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

Recompute parse_recompute(const std::string& s) {
  if (s == "none") return Recompute::kNone;
  if (s == "selective") return Recompute::kSelective;
  if (s == "full") return Recompute::kFull;
  throw InputError("--recompute " + s + ": expected none, selective or full");
}

int64_t Layout::layers_on_stage(int stage, int pp) const {
  int64_t n = 0;
  for (size_t j = static_cast<size_t>(stage); j < chunk_layers.size(); j += static_cast<size_t>(pp))
    n += chunk_layers[j];
  return n;
}

Layout check_layout(const ModelSpec& m, const ParallelConfig& c) {
  validate(m);
  auto fail = [&](const std::string& why) { throw InputError("invalid layout: " + why); };
  auto n = [](int64_t v) { return std::to_string(v); };
  // Caps that keep every count the step graph derives (GPUs, micro-batches, tokens, activation
  // elements) exact in int64 and far from what a planning question needs: the largest published
  // runs use ~2^15 GPUs and batches of a few thousand sequences.
  const int64_t kMaxDegree = int64_t{1} << 16, kMaxGpus = int64_t{1} << 20,
                kMaxBatch = int64_t{1} << 24;
  for (auto [v, name] : {std::pair<int64_t, const char*>{c.tp, "--tp"},
                         {c.cp, "--cp"},
                         {c.pp, "--pp"},
                         {c.dp, "--dp"},
                         {c.interleave, "--interleave"},
                         {c.gpus_per_node, "gpus per node"}})
    if (v < 1 || v > kMaxDegree)
      fail(std::string(name) + " must be between 1 and " + n(kMaxDegree) + " (got " + n(v) + ")");
  // Each degree is below 2^16, so the product of four fits int64 exactly.
  const int64_t gpus = int64_t{c.tp} * c.cp * c.pp * c.dp;
  if (gpus > kMaxGpus)
    fail("--tp x --cp x --pp x --dp is " + n(gpus) + " GPUs; at most " + n(kMaxGpus) +
         " are supported");
  if (c.mbs < 1) fail("--mbs must be positive (got " + n(c.mbs) + ")");
  if (c.gbs < 1) fail("--gbs must be positive (got " + n(c.gbs) + ")");
  if (c.gbs > kMaxBatch)
    fail("--gbs " + n(c.gbs) + " is above the supported " + n(kMaxBatch) + " sequences");
  if (c.mbs > c.gbs) fail("--mbs " + n(c.mbs) + " is larger than --gbs " + n(c.gbs));
  if (m.heads % c.tp) fail("heads (" + n(m.heads) + ") not divisible by --tp " + n(c.tp));
  if (m.kv_heads % c.tp) fail("KV heads (" + n(m.kv_heads) + ") not divisible by --tp " + n(c.tp));
  if (m.ffn % c.tp) fail("ffn (" + n(m.ffn) + ") not divisible by --tp " + n(c.tp));
  if (m.hidden % c.tp) fail("hidden (" + n(m.hidden) + ") not divisible by --tp " + n(c.tp));
  if (m.seq % (2 * c.cp) && c.cp > 1)
    fail("seq (" + n(m.seq) + ") not divisible by 2 x --cp " + n(c.cp) +
         " (context parallel splits each sequence into 2 x cp chunks)");
  if (c.sequence_parallel && c.tp == 1) fail("--sp needs --tp > 1");
  if (c.fsdp && int64_t{c.dp} * c.cp == 1) fail("--fsdp needs --dp x --cp > 1 to shard over");
  // Megatron-Core refuses defer_embedding_wgrad_compute without a pipeline: the deferred GEMMs
  // fill the last stage's wait for the others' last backward passes.
  if (c.deferred_head_wgrads < 0)
    fail("--defer-embedding-wgrad must be a count of micro-batches (got " +
         n(c.deferred_head_wgrads) + ")");
  if (c.deferred_head_wgrads > 0 && c.pp == 1) fail("--defer-embedding-wgrad needs --pp > 1");
  // The deferred GEMMs accumulate into the output layer's unsharded main gradient, which FSDP
  // does not keep (NeMo's recipes turn deferral off with Megatron-FSDP).
  if (c.deferred_head_wgrads > 0 && c.fsdp)
    fail("--defer-embedding-wgrad does not run with --fsdp");
  if (c.sequence_parallel && (m.seq / c.cp) % c.tp)
    fail("sequence per GPU (" + n(m.seq / c.cp) +
         " = seq / cp) not divisible by --tp for sequence parallel");
  const int64_t stages = int64_t{c.pp} * c.interleave;
  if (c.split_counts_embedding) {
    if (stages < 2) fail("--split-embedding needs --pp x --interleave >= 2");
    if ((m.layers + 2) % stages)
      fail("layers + 2 (" + n(m.layers + 2) +
           ", embedding and loss counted as layers) not "
           "divisible by --pp x --interleave (" +
           n(stages) + ")");
    if ((m.layers + 2) / stages < 2)
      fail("--split-embedding leaves the first or last virtual stage without a layer");
  } else if (m.layers % stages) {
    std::string hint;
    if ((m.layers + 2) % stages == 0 && stages > 1)
      hint =
          "; --split-embedding counts the embedding and the loss as one layer each, as "
          "Megatron's account_for_embedding/loss_in_pipeline_split, making " +
          n(m.layers + 2) + " divisible";
    fail("layers (" + n(m.layers) + ") not divisible by --pp x --interleave (" + n(stages) + ")" +
         hint);
  }
  if (c.interleave > 1 && c.pp == 1) fail("--interleave needs --pp > 1");
  if (c.gbs % (int64_t{c.dp} * c.mbs))
    fail("--gbs " + n(c.gbs) + " not divisible by --dp x --mbs (" + n(int64_t{c.dp} * c.mbs) + ")");
  Layout l;
  l.microbatches = c.gbs / (int64_t{c.dp} * c.mbs);
  if (c.interleave > 1 && l.microbatches % c.pp)
    fail("interleaved 1F1B needs micro-batches (" + n(l.microbatches) +
         " = gbs / (dp x mbs)) to be a multiple of --pp " + n(c.pp));
  if (static_cast<double>(l.microbatches) * static_cast<double>(m.layers) > 1e9)
    fail("micro-batches x layers (" + n(l.microbatches) + " x " + n(m.layers) +
         ") is too large to model kernel by kernel");
  const int64_t per = c.split_counts_embedding ? (m.layers + 2) / stages : m.layers / stages;
  int64_t first = 0;
  for (int64_t j = 0; j < stages; ++j) {
    int64_t layers = per;
    if (c.split_counts_embedding && (j == 0 || j == stages - 1)) layers -= 1;
    l.chunk_layers.push_back(layers);
    l.chunk_first_layer.push_back(first);
    first += layers;
  }
  const int64_t pad = 128 * int64_t{c.tp};
  l.padded_vocab = (m.vocab + pad - 1) / pad * pad;
  // Element counts of the widest activation of a micro-batch (tokens x hidden, FFN, vocabulary
  // shard, gathered KV) must stay exact in int64 with room for the byte factors applied to them.
  int64_t tokens = 0, elements = 0;
  const int64_t widest = std::max(
      {m.hidden, 2 * m.ffn, l.padded_vocab, m.q_size() + 2 * m.kv_size(), 2 * m.kv_size() * c.cp});
  if (__builtin_mul_overflow(c.mbs, m.seq, &tokens) ||
      __builtin_mul_overflow(tokens, widest, &elements) || elements > (int64_t{1} << 56))
    fail("--mbs " + n(c.mbs) + " x seq " + n(m.seq) + " tokens per micro-batch times the widest " +
         "activation (" + n(widest) + " elements per token) overflows the modelled sizes");
  l.tokens_per_microbatch = tokens / c.cp;
  // A GEMM's rows are the micro-batch's tokens on a GPU: beyond 2^31 no GEMM library runs it.
  if (l.tokens_per_microbatch > (int64_t{1} << 31))
    fail("--mbs " + n(c.mbs) + " x seq " + n(m.seq) + " / --cp " + n(c.cp) + " is " +
         n(l.tokens_per_microbatch) + " tokens per micro-batch on a GPU, more than the 2^31 " +
         "rows a GEMM takes");
  return l;
}

int64_t deferred_head_wgrad_count(const ParallelConfig& c, int64_t microbatches) {
  return c.pp > 1 ? std::min(c.deferred_head_wgrads, microbatches) : 0;
}

}  // namespace lumos::model
