#include "trace/runtime_names.hpp"

#include <array>
#include <string>

namespace lumos::trace {
namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

// Drops the vendor prefix so that cudaX, cuX and hipX compare alike: "LaunchKernel", ...
std::string_view strip_vendor(std::string_view n) {
  if (starts_with(n, "cuda")) return n.substr(4);
  if (starts_with(n, "hip")) return n.substr(3);
  if (starts_with(n, "cu")) return n.substr(2);
  return n;
}

}  // namespace

RuntimeRole runtime_role(std::string_view name) {
  const std::string_view n = strip_vendor(name);
  if (starts_with(n, "StreamSynchronize")) return RuntimeRole::kStreamSync;
  if (starts_with(n, "DeviceSynchronize") || starts_with(n, "CtxSynchronize"))
    return RuntimeRole::kDeviceSync;
  if (starts_with(n, "EventSynchronize")) return RuntimeRole::kEventSync;
  if (starts_with(n, "EventRecord")) return RuntimeRole::kEventRecord;
  if (starts_with(n, "StreamWaitEvent")) return RuntimeRole::kStreamWaitEvent;
  // Synchronous copies and the Async copies that may block on pageable memory.
  if (n == "Memcpy" || n == "Memcpy2D" || n == "MemcpyDtoH" || n == "MemcpyHtoD" ||
      n == "MemcpyAsync" || n == "MemcpyDtoHAsync" || n == "MemcpyHtoDAsync" ||
      n == "MemcpyWithStream" || starts_with(n, "MemcpyAsync_") || starts_with(n, "Memcpy2DAsync"))
    return RuntimeRole::kBlockingMemcpy;
  if (contains(n, "LaunchKernel") || contains(n, "LaunchCooperativeKernel") ||
      starts_with(n, "GraphLaunch") || starts_with(n, "Memset") || starts_with(n, "MemcpyPeer") ||
      starts_with(n, "ModuleLaunchKernel") || starts_with(n, "ExtLaunch") ||
      starts_with(n, "LaunchHostFunc") || starts_with(n, "MemcpyDtoD"))
    return RuntimeRole::kLaunch;
  return RuntimeRole::kOther;
}

bool is_comm_kernel(std::string_view name) {
  return starts_with(name, "nccl") || starts_with(name, "rccl") || starts_with(name, "hccl") ||
         contains(name, "ncclKernel") || contains(name, "ncclDevKernel") ||
         contains(name, "rcclKernel");
}

namespace {

struct TypeWord {
  std::string_view word;
  CollectiveType type;
};
constexpr std::array<TypeWord, 9> kTypeWords{{
    {"AllReduce", CollectiveType::kAllReduce},
    {"AllGather", CollectiveType::kAllGather},
    {"ReduceScatter", CollectiveType::kReduceScatter},
    {"AllToAll", CollectiveType::kAllToAll},
    {"Broadcast", CollectiveType::kBroadcast},
    {"SendRecv", CollectiveType::kSendRecv},
    {"Send", CollectiveType::kSend},
    {"Recv", CollectiveType::kRecv},
    {"Reduce", CollectiveType::kReduce},
}};
constexpr std::array<std::string_view, 6> kAlgos{"NVLS_TREE",     "NVLSTREE", "COLLNET_DIRECT",
                                                 "COLLNET_CHAIN", "NVLS",     "RING"};
constexpr std::array<std::string_view, 3> kProtocols{"LL128", "LL", "SIMPLE"};
constexpr std::array<std::string_view, 12> kDtypes{"bf16", "f16", "f32", "f64", "f8e4m3", "f8e5m2",
                                                   "i8",   "u8",  "i32", "u32", "i64",    "u64"};
constexpr std::array<std::string_view, 9> kLongDtypes{"__nv_bfloat16", "half",     "float",
                                                      "double",        "int8_t",   "uint8_t",
                                                      "int32_t",       "uint32_t", "int64_t"};

// Splits the part of the name before '(' into '_'-separated tokens.
std::vector<std::string_view> name_tokens(std::string_view name) {
  const size_t paren = name.find('(');
  std::string_view head = name.substr(0, paren);
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= head.size()) {
    size_t next = head.find('_', pos);
    if (next == std::string_view::npos) next = head.size();
    if (next > pos) out.push_back(head.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

}  // namespace

CollectiveInfo collective_from_kernel_name(std::string_view name) {
  CollectiveInfo info;
  if (!is_comm_kernel(name)) return info;
  info.type = CollectiveType::kOther;
  const std::vector<std::string_view> toks = name_tokens(name);
  for (const auto& tw : kTypeWords) {
    bool hit = false;
    for (auto t : toks) hit = hit || t == tw.word;
    if (hit) {
      info.type = tw.type;
      break;
    }
  }
  // Algorithm names may span two tokens (NVLS_TREE, COLLNET_DIRECT): test adjacent pairs first.
  for (size_t i = 0; i < toks.size() && info.algorithm.empty(); ++i) {
    for (auto a : kAlgos) {
      const std::string two = i + 1 < toks.size()
                                  ? std::string(toks[i]) + "_" + std::string(toks[i + 1])
                                  : std::string();
      if (two == a || toks[i] == a) {
        info.algorithm = std::string(a);
        break;
      }
    }
    if (info.algorithm.empty() && toks[i] == "TREE") info.algorithm = "TREE";
  }
  for (auto t : toks) {
    for (auto p : kProtocols)
      if (info.protocol.empty() && t == p) info.protocol = std::string(p);
    for (auto d : kDtypes)
      if (info.dtype.empty() && t == d) info.dtype = std::string(d);
  }
  for (size_t i = 0; i < toks.size() && info.dtype.empty(); ++i)
    for (auto d : kLongDtypes)
      if (toks[i] == d || (d == "__nv_bfloat16" && toks[i] == "bfloat16"))
        info.dtype = std::string(d);
  // "int8_t" splits into "int8" "t"; catch that spelling too.
  for (size_t i = 0; i + 1 < toks.size() && info.dtype.empty(); ++i)
    if (toks[i + 1] == "t" && (toks[i] == "int8" || toks[i] == "uint8" || toks[i] == "int32" ||
                               toks[i] == "uint32" || toks[i] == "int64" || toks[i] == "uint64"))
      info.dtype = std::string(toks[i]) + "_t";
  return info;
}

CollectiveType collective_from_arg(std::string_view c) {
  while (!c.empty() && c.front() == '_') c.remove_prefix(1);
  if (starts_with(c, "allreduce") || starts_with(c, "all_reduce"))
    return CollectiveType::kAllReduce;
  if (starts_with(c, "allgather") || starts_with(c, "all_gather"))
    return CollectiveType::kAllGather;
  if (starts_with(c, "reduce_scatter") || starts_with(c, "reducescatter"))
    return CollectiveType::kReduceScatter;
  if (starts_with(c, "alltoall") || starts_with(c, "all_to_all")) return CollectiveType::kAllToAll;
  if (starts_with(c, "broadcast")) return CollectiveType::kBroadcast;
  if (starts_with(c, "reduce")) return CollectiveType::kReduce;
  if (starts_with(c, "send")) return CollectiveType::kSend;
  if (starts_with(c, "recv")) return CollectiveType::kRecv;
  return c.empty() ? CollectiveType::kNone : CollectiveType::kOther;
}

const char* to_string(CollectiveType t) {
  switch (t) {
    case CollectiveType::kNone:
      return "none";
    case CollectiveType::kAllReduce:
      return "allreduce";
    case CollectiveType::kAllGather:
      return "allgather";
    case CollectiveType::kReduceScatter:
      return "reducescatter";
    case CollectiveType::kAllToAll:
      return "alltoall";
    case CollectiveType::kBroadcast:
      return "broadcast";
    case CollectiveType::kReduce:
      return "reduce";
    case CollectiveType::kSendRecv:
      return "sendrecv";
    case CollectiveType::kSend:
      return "send";
    case CollectiveType::kRecv:
      return "recv";
    case CollectiveType::kOther:
      return "other";
  }
  return "?";
}

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::kCpuOp:
      return "cpu_op";
    case EventKind::kUserAnnotation:
      return "user_annotation";
    case EventKind::kRuntime:
      return "runtime";
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kMemcpy:
      return "memcpy";
    case EventKind::kMemset:
      return "memset";
    case EventKind::kSync:
      return "cuda_sync";
  }
  return "?";
}

}  // namespace lumos::trace
