#include "model/flops.hpp"

namespace lumos::model {
namespace {

// Per token, forward only, multiply-adds x 2.
struct ForwardFlops {
  double layer_gemms = 0;         // QKV, output projection, MLP, per layer
  double every_other_matmul = 0;  // every second matmul of the layer (wk, wo, w3; GPT: wo, FC2)
  double fc2 = 0;                 // the MLP's last matmul, per layer
  double attention = 0;           // causal QK^T and attention x V, per layer
  double logits = 0;
};

ForwardFlops forward_per_token(const ModelSpec& m, int64_t padded_vocab) {
  const double h = static_cast<double>(m.hidden), q = static_cast<double>(m.q_size()),
               kv = static_cast<double>(m.kv_size()), f = static_cast<double>(m.ffn),
               s = static_cast<double>(m.seq);
  const double mlp_mats = m.act == Activation::kSwiglu ? 3 : 2;
  ForwardFlops r;
  r.layer_gemms = 2 * (h * (q + 2 * kv) + q * h + h * f * mlp_mats);
  // torchtitan's Llama runs wq, wk, wv, wo, w1, w3, w2 (stacks.json separate_projections); a GPT
  // layer its fused QKV, the attention projection, FC1, FC2.
  r.every_other_matmul = 2 * ((m.act == Activation::kSwiglu ? h * kv : 0) + q * h + h * f);
  r.fc2 = 2 * f * h;
  r.attention = 2 * (q * s / 2 * 2);
  r.logits = 2 * h * static_cast<double>(padded_vocab);
  return r;
}

}  // namespace

double megatron_model_flops(const ModelSpec& m, int64_t batch, int64_t padded_vocab) {
  const ForwardFlops f = forward_per_token(m, padded_vocab);
  const double tokens = static_cast<double>(batch) * static_cast<double>(m.seq);
  const double L = static_cast<double>(m.layers);
  return 3 * tokens * ((f.layer_gemms + f.attention) * L + f.logits);
}

double hardware_flops(const ModelSpec& m, int64_t batch, int64_t padded_vocab, Recompute r,
                      const cost::StackSpec* stack) {
  const ForwardFlops f = forward_per_token(m, padded_vocab);
  const double tokens = static_cast<double>(batch) * static_cast<double>(m.seq);
  const double L = static_cast<double>(m.layers);
  double extra = 0;
  if (r == Recompute::kFull)
    extra = (f.layer_gemms + f.attention - (stack && stack->recompute_early_stop ? f.fc2 : 0)) * L;
  const bool op_level = stack && stack->selective == cost::SelectiveRecompute::kEveryOtherMatmul;
  if (r == Recompute::kSelective) extra = (op_level ? f.every_other_matmul : f.attention) * L;
  return megatron_model_flops(m, batch, padded_vocab) + tokens * extra;
}

}  // namespace lumos::model
