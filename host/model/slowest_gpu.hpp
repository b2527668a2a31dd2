// The slowest GPU of a synchronous job (docs/design.md, "Slowest GPU"): GPUs of one model do not
// run matrix kernels at one speed (silicon and cooling; gpus.json matmul_spread), and a job
// whose GPUs wait for each other every step runs at its slowest GPU's pace. With throughput
// normal around the kernel tables' GPU, the slowest of N lies e_N standard deviations below it,
// e_N the expected maximum of N standard normal draws; the standard deviation comes from the
// published spread of a node's 8 GPUs, whose expected range is 2 e_8 of them.
#pragma once
#include <cstdint>

#include "cost/kernels_db.hpp"

namespace lumos::model {

// The expected maximum of n independent standard normal draws (0 for n = 1; n >= 1).
double expected_max_of_normals(int64_t n);

// The factor on a matrix kernel's time (GEMMs, attention) that a job of `gpus` GPUs of this model
// runs at: its slowest GPU's against the tables' (1 for one GPU or a GPU without a published
// spread).
double slowest_gpu_matrix_factor(const cost::GpuSpec& gpu, int64_t gpus);

}  // namespace lumos::model
