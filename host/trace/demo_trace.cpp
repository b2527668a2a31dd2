#include "trace/demo_trace.hpp"

#include <algorithm>
#include <map>

#include "trace/kineto_writer.hpp"

namespace lumos::trace {
namespace {

constexpr int64_t kMainTid = 1;
constexpr int64_t kDevice = 0;
constexpr int64_t kCompute = 7;
constexpr int64_t kComm = 20;

// A tiny simulator of one CPU thread and two streams, writing what it "observes".
class DemoSim {
 public:
  explicit DemoSim(const DemoOptions& o) : o_(o) {}

  // An operator that launches one GPU op of gpu_us; returns its end time on the GPU.
  double op_with_kernel(const std::string& op, const std::string& kernel, int64_t stream,
                        double gpu_us, double wait_until = 0) {
    const double op_ts = cpu_ += 4;  // Python time between operators
    const double call_ts = op_ts + 6;
    const double call_dur = 7;
    const double gpu_ts = std::max({call_ts + o_.launch_latency_us, free_[stream], wait_until});
    w_.cpu_op(kMainTid, op, op_ts, 20);
    w_.launch(kMainTid, "cudaLaunchKernel", call_ts, call_dur, "kernel", kernel, kDevice, stream,
              gpu_ts, gpu_us);
    free_[stream] = gpu_ts + gpu_us;
    cpu_ = op_ts + 20;
    return free_[stream];
  }

  // cudaEventRecord on `from`, cudaStreamWaitEvent on `to`: the next op on `to` waits.
  double record_and_wait(int64_t from, int64_t to) {
    const double rec_ts = cpu_ += 3;
    const int64_t rec = w_.runtime(kMainTid, "cudaEventRecord", rec_ts, 3);
    const double wait_ts = rec_ts + 5;
    const int64_t wait = w_.runtime(kMainTid, "cudaStreamWaitEvent", wait_ts, 3);
    w_.sync("Stream Wait Event", wait, kDevice, to, wait_ts, 3, from, rec);
    cpu_ = wait_ts + 3;
    return free_[from];
  }

  void step(int k) {
    const double step_ts = cpu_ += 10;
    cpu_ = step_ts + 2;
    for (int l = 0; l < o_.layers; ++l)
      op_with_kernel("aten::linear", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                     kCompute, o_.gemm_us);
    for (int l = 0; l < o_.layers; ++l)
      op_with_kernel("aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64",
                     kCompute, 2 * o_.gemm_us);
    const double grads_ready = record_and_wait(kCompute, kComm);
    op_with_kernel("c10d::allreduce_",
                   "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                   kComm, o_.allreduce_us, grads_ready);
    const double reduced = record_and_wait(kComm, kCompute);
    op_with_kernel("aten::_foreach_add_", "void at::native::multi_tensor_apply_kernel<>", kCompute,
                   60, reduced);
    // loss.item(): blocks until the compute stream is done.
    const double item_ts = cpu_ += 4;
    const double sync_ts = item_ts + 5;
    const double sync_end = std::max(sync_ts + 3, free_[kCompute] + 4);
    w_.cpu_op(kMainTid, "aten::item", item_ts, sync_end + 6 - item_ts);
    const int64_t corr = w_.runtime(kMainTid, "cudaStreamSynchronize", sync_ts, sync_end - sync_ts);
    w_.sync("Stream Sync", corr, kDevice, kCompute, sync_ts, sync_end - sync_ts);
    cpu_ = sync_end + 6;
    w_.annotation(kMainTid, "ProfilerStep#" + std::to_string(k), step_ts, cpu_ - step_ts);
  }

  std::string run() {
    w_.set_rank(0, 1);
    for (int k = 1; k <= o_.steps; ++k) step(k);
    return w_.json();
  }

 private:
  DemoOptions o_;
  KinetoWriter w_;
  double cpu_ = 0;
  std::map<int64_t, double> free_{{kCompute, 0.0}, {kComm, 0.0}};
};

}  // namespace

std::string demo_trace_json(const DemoOptions& opt) {
  return DemoSim(opt).run();
}

}  // namespace lumos::trace
