// The loaded trace: one row per timed event that the graph builder needs, in file order.
// Times are integer nanoseconds on the trace's own clock (absolute when the trace has no
// baseTimeNanoseconds, relative to that base otherwise); only differences matter downstream.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lumos::trace {

using TimeNs = int64_t;  // nanoseconds

enum class EventKind : uint8_t {
  kCpuOp,           // cat cpu_op / Operator
  kUserAnnotation,  // cat user_annotation (ProfilerStep#N lives here)
  kRuntime,         // cat cuda_runtime / cuda_driver / Runtime (also hip* names)
  kKernel,          // cat kernel / Kernel
  kMemcpy,          // cat gpu_memcpy / Memcpy
  kMemset,          // cat gpu_memset / Memset
  kSync,            // cat cuda_sync
};

const char* to_string(EventKind k);

enum class SyncKind : uint8_t { kNone, kContext, kStream, kEvent, kStreamWaitEvent };

enum class CollectiveType : uint8_t {
  kNone,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv,
  kSend,
  kRecv,
  kOther,
};

const char* to_string(CollectiveType t);

// What a collective kernel did, from NCCL args when the trace has them, else from its name.
struct CollectiveInfo {
  CollectiveType type = CollectiveType::kNone;
  std::string algorithm;  // RING, TREE, NVLS, ... ("" when unknown)
  std::string protocol;   // LL, LL128, SIMPLE ("" when unknown)
  std::string dtype;      // as the trace spells it (Float, BFloat16, f16, ...)
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = -1;
  int64_t seq = -1;
  std::string process_group;
  std::string process_group_desc;  // PyTorch's "Process Group Description" (Megatron's group name)
};

struct Event {
  EventKind kind = EventKind::kCpuOp;
  SyncKind sync = SyncKind::kNone;
  uint32_t name = 0;  // index into EventTable::names
  int64_t pid = 0;    // strings are mapped to negative ids (see EventTable::string_ids)
  int64_t tid = 0;
  TimeNs ts_ns = 0;
  TimeNs dur_ns = 0;
  int64_t correlation = -1;
  int64_t external_id = -1;
  int64_t stream = -1;  // GPU ops, syncs; -1 for CPU events
  int32_t device = -1;
  int64_t wait_on_stream = -1;       // Event Sync / Stream Wait Event
  int64_t wait_on_record_corr = -1;  // correlation of the matching cudaEventRecord
  int64_t memcpy_bytes = -1;
  int32_t collective = -1;  // index into EventTable::collectives
  int32_t shapes = -1;      // "Input Dims" (CPU ops, annotations): index into shape_offset
  uint32_t index = 0;       // position in the traceEvents array, for messages

  TimeNs end_ns() const { return ts_ns + dur_ns; }
  bool is_gpu_op() const {
    return kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset;
  }
};

struct EventTable {
  std::string path;
  std::vector<Event> events;
  std::vector<std::string> names;
  std::vector<CollectiveInfo> collectives;
  // "Input Dims" of CPU operators, flattened: operator k's inputs are
  // shape_offset[k] .. shape_offset[k+1] into input_offset, and input i's dims are
  // dims[input_offset[i] .. input_offset[i+1]].
  std::vector<uint32_t> shape_offset{0};
  std::vector<uint32_t> input_offset{0};
  std::vector<int64_t> dims;
  // "Input type" strings of the same operators, one per input ("" when absent).
  std::vector<uint32_t> input_type;  // index into names, per input
  int32_t rank = -1;                 // distributedInfo.rank, -1 when absent
  int32_t world_size = -1;
  // distributedInfo.lumos_traced_ranks: the ranks whose traces stand for the whole job (the
  // others repeat them; `lumos generate` writes one per pipeline stage). Empty when absent: then
  // every rank of world_size is expected.
  std::vector<int32_t> traced_ranks;
  // distributedInfo.pg_config: the process groups PyTorch lists for the rank, with the
  // description a framework gave each (Megatron's TENSOR_MODEL_PARALLEL_GROUP, "undefined" when
  // none). Empty when absent.
  struct ProcessGroupConfig {
    std::string name, desc;
    int32_t size = -1;
  };
  std::vector<ProcessGroupConfig> pg_config;
  std::string backend;
  std::string gpu_name;         // deviceProperties[0].name
  int64_t base_time_ns = 0;     // baseTimeNanoseconds, 0 when absent
  uint64_t json_bytes = 0;      // uncompressed JSON size
  uint64_t events_in_file = 0;  // every element of traceEvents, kept or not

  std::string_view name_of(const Event& e) const { return names[e.name]; }
  // The dims of each input of a CPU operator (empty when the trace has no shapes).
  std::vector<std::vector<int64_t>> input_dims(const Event& e) const;
  std::vector<std::string_view> input_types(const Event& e) const;
};

}  // namespace lumos::trace
