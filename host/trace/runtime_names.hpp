// What a CUDA/HIP runtime or driver call does, judged by its name, and what a GPU kernel's name
// says about communication. Both vendors' spellings are accepted (cuda*, cu*, hip*).
#pragma once
#include <string_view>

#include "trace/event_table.hpp"

namespace lumos::trace {

enum class RuntimeRole : uint8_t {
  kOther,            // no dependency beyond its thread (cudaGetDevice, cudaEventQuery, ...)
  kLaunch,           // enqueues GPU work (kernel, memcpy, memset, graph)
  kBlockingMemcpy,   // enqueues a copy and may wait for it (cudaMemcpy, cudaMemcpyAsync)
  kEventRecord,      // cudaEventRecord
  kStreamWaitEvent,  // cudaStreamWaitEvent
  kStreamSync,       // cudaStreamSynchronize
  kDeviceSync,       // cudaDeviceSynchronize / cudaCtxSynchronize
  kEventSync,        // cudaEventSynchronize
};

RuntimeRole runtime_role(std::string_view name);

// NCCL/RCCL/HCCL kernels, HTA's COMMUNICATION pattern plus newer ncclDevKernel names.
bool is_comm_kernel(std::string_view name);

// Collective type, algorithm, protocol and dtype from a kernel name such as
// ncclDevKernel_AllReduce_Sum_f16_RING_LL(...) or ncclKernel_AllReduce_RING_LL_Sum_float(...).
CollectiveInfo collective_from_kernel_name(std::string_view name);

// Collective type from the `Collective name` arg (allreduce, _allgather_base, ...).
CollectiveType collective_from_arg(std::string_view collective_name);

}  // namespace lumos::trace
