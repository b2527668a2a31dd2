// Runtime calls are classified by name across CUDA and HIP spellings, and NCCL kernel names
// give the collective, algorithm, protocol and dtype.
#include <gtest/gtest.h>

#include "trace/runtime_names.hpp"

using lumos::trace::CollectiveType;
using lumos::trace::runtime_role;
using lumos::trace::RuntimeRole;

TEST(RuntimeRole, LaunchesInEveryApi) {
  for (const char* n :
       {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
        "cudaMemsetAsync", "cudaGraphLaunch", "hipLaunchKernel", "hipExtLaunchKernel",
        "hipModuleLaunchKernel", "hipMemsetAsync", "hipGraphLaunch"})
    EXPECT_EQ(runtime_role(n), RuntimeRole::kLaunch) << n;
}

TEST(RuntimeRole, SyncsRecordsWaitsAndCopies) {
  EXPECT_EQ(runtime_role("cudaStreamSynchronize"), RuntimeRole::kStreamSync);
  EXPECT_EQ(runtime_role("hipStreamSynchronize"), RuntimeRole::kStreamSync);
  EXPECT_EQ(runtime_role("cudaDeviceSynchronize"), RuntimeRole::kDeviceSync);
  EXPECT_EQ(runtime_role("cudaEventSynchronize"), RuntimeRole::kEventSync);
  EXPECT_EQ(runtime_role("cudaEventRecord"), RuntimeRole::kEventRecord);
  EXPECT_EQ(runtime_role("cudaEventRecordWithFlags"), RuntimeRole::kEventRecord);
  EXPECT_EQ(runtime_role("cudaStreamWaitEvent"), RuntimeRole::kStreamWaitEvent);
  EXPECT_EQ(runtime_role("cudaMemcpyAsync"), RuntimeRole::kBlockingMemcpy);
  EXPECT_EQ(runtime_role("hipMemcpyWithStream"), RuntimeRole::kBlockingMemcpy);
  EXPECT_EQ(runtime_role("cudaEventQuery"), RuntimeRole::kOther);
  EXPECT_EQ(runtime_role("cudaGetDevice"), RuntimeRole::kOther);
}

TEST(CommKernels, HtaPatternAndNewerNames) {
  EXPECT_TRUE(lumos::trace::is_comm_kernel("ncclDevKernel_AllReduce_Sum_f16_RING_LL(x)"));
  EXPECT_TRUE(lumos::trace::is_comm_kernel("void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)"));
  EXPECT_TRUE(lumos::trace::is_comm_kernel("rcclGenericKernel"));
  EXPECT_FALSE(lumos::trace::is_comm_kernel("sm90_xmma_gemm_bf16"));
}

TEST(CommKernels, NameGivesTypeAlgorithmProtocolDtype) {
  auto c = lumos::trace::collective_from_kernel_name(
      "ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(c.type, CollectiveType::kAllReduce);
  EXPECT_EQ(c.algorithm, "NVLS_TREE");
  EXPECT_EQ(c.protocol, "SIMPLE");
  EXPECT_EQ(c.dtype, "bf16");
  c = lumos::trace::collective_from_kernel_name(
      "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(c.type, CollectiveType::kSendRecv);
  EXPECT_EQ(c.algorithm, "RING");
  EXPECT_EQ(c.dtype, "int8_t");
  c = lumos::trace::collective_from_kernel_name(
      "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL128(x)");
  EXPECT_EQ(c.type, CollectiveType::kReduceScatter);
  EXPECT_EQ(c.protocol, "LL128");
  EXPECT_EQ(lumos::trace::collective_from_arg("_reduce_scatter_base"),
            CollectiveType::kReduceScatter);
  EXPECT_EQ(lumos::trace::collective_from_arg("alltoall_base"), CollectiveType::kAllToAll);
}
