// The attention kernels a software stack runs: unfused (batched GEMMs and memory-bound kernels over
// the scores), FlashAttention-2, FlashAttention-3, or cuDNN's fused attention (Transformer Engine's
// default on Hopper). Its own header so that a layout (model/parallel_config.hpp) can name one
// without the kernel tables.
#pragma once

namespace lumos::cost {

enum class AttentionImpl { kUnfused, kFlash2, kFlash3, kCudnn };
const char* to_string(AttentionImpl a);

}  // namespace lumos::cost
