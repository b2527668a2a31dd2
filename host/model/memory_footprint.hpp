// Memory per GPU of a layout, by Megatron's accounting (calibration.md §2.2 and §4.3,
// megatron/training/theoretical_memory_usage.py): bf16 weights (and with FP8 their cached FP8
// copies, or FP8 weights), fp32 main gradients, fp32 Adam state (master, m, v) sharded over data
// parallel with the distributed optimizer (and, with FSDP, weights and gradients too, plus the
// gathered working copies), and the activations of the micro-batches in flight. With flash
// attention there is no s^2 term, and recompute none and selective keep the same activations; a
// stack with unfused attention keeps the softmax output (and the dropout mask and output) of every
// head unless it recomputes them.
#pragma once
#include <cstdint>
#include <vector>

#include "cost/kernels_db.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"

namespace lumos::model {

struct StageMemory {
  int stage = 0;
  int64_t params = 0;  // held by one GPU of this stage
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double inflight_microbatches = 0;
  double total_bytes() const {
    return weights_bytes + grads_bytes + optimizer_bytes + activations_bytes;
  }
};

constexpr double kWeightBytesPerParam = 2;  // bf16
// fp32 main grads, where no stack is given; a stack's (or the layout's) grad_reduce_bytes
// otherwise. 16-bit gradients are copied to fp32 for the optimizer at the step, after the
// activations are freed: memory_per_stage counts the copies where they outgrow the activations.
constexpr double kGradBytesPerParam = 4;
constexpr double kOptimizerBytesPerParam = 12;  // fp32 master weights, Adam m and v

// Activation bytes of one layer for one micro-batch on one GPU (Korthikanti et al. 2022, Table 2,
// generalized to any FFN as in theoretical_memory_usage.py, and term by term to grouped-query
// attention's smaller K and V, a gated MLP's two kept inner tensors, a stack without dropout and
// FP8's 1-byte copies of GEMM inputs). `stack` null: flash attention, with dropout.
double layer_activation_bytes(const ModelSpec& m, const ParallelConfig& c,
                              const cost::StackSpec* stack = nullptr);

// One entry per pipeline stage.
std::vector<StageMemory> memory_per_stage(const ModelSpec& m, const ParallelConfig& c,
                                          const Layout& l, const cost::StackSpec* stack = nullptr);

}  // namespace lumos::model
