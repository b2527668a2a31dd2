// FLOPs of one training iteration by Megatron's formula (calibration.md §4.1, the function in
// megatron/training/training.py): model FLOPs count forward and backward once (3 x 2 x the
// multiply-adds, causal attention halved); hardware FLOPs add what recomputation re-runs.
#pragma once
#include <cstdint>

#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"

namespace lumos::model {

// Model FLOPs for `batch` sequences with the vocabulary as padded.
double megatron_model_flops(const ModelSpec& m, int64_t batch, int64_t padded_vocab);

// Model FLOPs plus the recomputed forward work: full recomputation re-runs every layer's forward
// (not the logits; FC2 neither where the stack's recomputation stops early); selective, as the
// stack's policy says (Megatron's without a stack), the attention core (QK^T and attention x V)
// or every second of the layer's seven matmuls (wk, wo and w3: torchtitan).
double hardware_flops(const ModelSpec& m, int64_t batch, int64_t padded_vocab, Recompute r,
                      const cost::StackSpec* stack = nullptr);

}  // namespace lumos::model
