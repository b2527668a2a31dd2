// kernels_db/ loaded into memory: GPU specs, GEMM model parameters and measured points,
// attention tables, memory-bound kernel parameters, NCCL constants and kernel-name patterns.
// The files are embedded in the binary at build time (so `lumos` runs anywhere); a folder of
// files can replace them (`--db DIR`). Every loader checks schema_version and names the file and
// entry that is wrong.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/attention_impl.hpp"
#include "cost/dtype.hpp"

namespace lumos::cost {

enum class Arch { kAmpere, kHopper, kBlackwell };

struct GpuSpec {
  std::string name;
  std::vector<std::string> aliases;
  Arch arch = Arch::kHopper;
  int sm_version = 90;
  int sms = 0;
  std::array<std::optional<double>, kNumDtypes> peak_tflops{};
  double hbm_gbps = 0;
  double hbm_gib = 0;
  std::optional<double> l2_mib;
  double nvlink_gbps = 0;
  int nvlink_links = 0;
  double nccl_link_gbps = 0;
  double pcie_h2d_gbps = 0;
  double pcie_d2h_gbps = 0;
  double d2d_gbps = 0;
  double tdp_w = 0;
  double idle_w = 0;
  // A part run below the power its silicon draws at full clock (`full_clock_part` in gpus.json:
  // the same chip at its full TDP, whose kernel figures apply): matrix kernels, which draw the
  // full TDP, run at the clock the cap allows. Power linear in clock (C §5's P_idle + (P_max -
  // P_idle) x util): (tdp_w - idle_w) / (full TDP - idle_w). 1 for every uncapped part.
  std::string full_clock_part;
  double matrix_clock_fraction = 1;
  // (fastest - slowest) / fastest matrix throughput across the GPUs of one node (gpus.json
  // matmul_spread): what sets a synchronous job's slowest GPU (model/slowest_gpu.hpp). 0 where no
  // source gives it.
  double matmul_spread = 0;
  // NCCL's view of a GPU's NVLink bandwidth: links x per-link constant (GB/s).
  double nccl_nvlink_total_gbps() const { return nccl_link_gbps * nvlink_links; }
};

// The GPU with another NVLink bandwidth per direction (GB/s): NCCL's view of it scales with the
// line rate (a what-if: same links, faster or slower). Throws InputError unless gbps > 0.
GpuSpec with_nvlink_gbps(const GpuSpec& gpu, double gbps);

struct GemmTile {
  int tm = 128, tn = 256;
  double efficiency = 1.0;
};

struct GemmPoint {
  std::string gpu;
  Dtype dtype = Dtype::kBf16;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double tflops = 0;
  // A maximum-achievable figure (MAMF: the best of a brute-force shape sweep): no GEMM of this
  // GPU and dtype runs faster, whatever the fitted surface says.
  bool ceiling = false;
  std::string source;
};

struct GemmParams {
  std::map<Arch, std::array<std::optional<double>, kNumDtypes>> peak_fraction;
  std::map<Arch, double> k_half;
  // An FP8 GEMM with fast accumulation (partial sums kept in the tensor cores' accumulators, not
  // promoted to fp32 every 128 elements of K) over one with split accumulation, as the FP8
  // points and peak fractions were measured; 1 where the architecture has no such mode.
  std::map<Arch, double> fp8_fast_accum_speedup;
  std::vector<GemmTile> tiles;
  double streamk_efficiency = 0.95;
  double streamk_fixup_us = 5;
  double hbm_fraction = 0.9;
  double floor_us = 3;
  double misaligned_factor = 0.685;
  std::vector<GemmPoint> points;
};

struct AttentionTable {
  std::string impl = "fa3";  // fa3 | fa2 | cudnn
  std::string gpu;           // the GPU it was measured on (its canonical name)
  Arch gpu_arch = Arch::kHopper;
  bool backward = false;
  bool causal = false;
  int head_dim = 128;
  Dtype dtype = Dtype::kBf16;
  std::vector<double> seq;
  std::vector<double> tflops;
  std::string source;
};

struct AttentionParams {
  std::string reference_gpu;
  double backward_flop_factor = 2.5;
  std::vector<AttentionTable> tables;
};

struct MemoryBoundParams {
  double floor_us = 3;
  std::map<std::string, double> fraction;  // by class: norm, softmax, loss, elementwise, ...
  std::map<std::pair<Arch, std::string>, double> arch_fraction;  // replaces it on one arch
  double optimizer_bytes_per_param = 30;
};

// Triples are indexed by protocol: 0 LL, 1 LL128, 2 Simple.
using ProtoTriple = std::array<double, 3>;

struct NcclCaps {
  ProtoTriple ll_max_bw{};  // by node count class: 1, 2, more
  double ring_ll128_per_ch = 0;
  ProtoTriple tree_ll128_per_ch{};
  ProtoTriple tree_per_ch{};
  ProtoTriple nvls_tree_per_ch{};
};

struct Topology {
  std::string name;
  int gpus_per_node = 8;
  double nic_gbps = 50;  // line rate of one NIC, GB/s
  int nics_per_gpu = 1;
  double nic_efficiency = 1;                // achieved fraction of NIC line rate in collectives
  double nvlink_efficiency = 1;             // achieved fraction of NCCL's NVLink bandwidth
  ProtoTriple base_latency_scale{1, 1, 1};  // multiplies NCCL's base latencies (LL, LL128, Simple)
  double nvlink_latency_scale = 1;          // multiplies NCCL's NVLink per-hop latencies
  double net_latency_scale = 1;             // multiplies NCCL's network per-hop latencies
};

struct NcclParams {
  // [algo][proto]: algo 0 tree, 1 ring, 2 nvls, 3 nvls_tree.
  std::array<ProtoTriple, 4> base_latency_us{};
  // [link][algo][proto]: link 0 nvlink, 1 pci, 2 net.
  std::array<std::array<ProtoTriple, 4>, 3> hw_latency_us{};
  double net_overhead_us = 1.0;
  double ring_plateau_factor = 1.4;
  int channels = 16;
  std::map<Arch, NcclCaps> caps;
  std::map<Arch, double> nvls_efficiency;
  int nvls_min_ranks_per_node = 5;
  std::array<std::array<double, 24>, 3> tree_correction{};
  std::map<std::string, Topology> topologies;
  std::map<std::string, std::string> default_topology;  // gpu name -> topology
};

// Host and framework constants of the model-driven training step (kernels_db/training.json).
struct TrainingParams {
  double cpu_launch_us = 5;
  double launch_latency_us = 4;
  double event_call_us = 2;
  double bucket_params = 40e6;
  double bucket_params_per_dp_rank = 1e6;
};

// A software stack (kernels_db/stacks.json): what the training framework of an era runs for a
// layer and an optimizer step. Read by the model-driven step (model/step_costs.cpp).
// kUserbuffers: kBackward, and every other tensor-parallel collective split into chunks and
// pipelined with the GEMM beside it (Transformer Engine's userbuffers, --tp-comm-overlap).
enum class TpOverlap { kNone, kBackward, kUserbuffers };
enum class SelectiveRecompute { kAttentionCore, kEveryOtherMatmul };
// Which kernels that produce an FP8 GEMM's input (or output gradient) also quantize it:
// none (eager casts of their own), the norm before QKV and FC1 (Transformer Engine's
// LayerNormLinear under Megatron-Core, whose activation is its own bf16 kernel), or the norm and
// the activation before FC2 with the activation's backward.
enum class Fp8CastFusion { kNone, kNorm, kNormAndActivation };
// How context-parallel attention moves the KV between the ranks of the CP group: Transformer
// Engine's point-to-point ring (one chunk beside each step, the KV gradients travelling with
// their chunk), or PyTorch's context_parallel with its default rotate method (the whole KV
// all-gathered beside the first step; the KV gradients, in fp32, passed along the ring).
enum class CpRotation { kRing, kAllGather };
// What a sequence-parallel column-parallel layer (QKV, FC1) keeps of its gathered input for the
// weight gradient: the rank's shard, gathered again in backward (Megatron-Core's and Transformer
// Engine's linear layers), or the gathered tensor itself (PyTorch DTensor: autograd saves the
// matmul's input, which op-level recomputation may drop and rerun).
enum class SpSavedInput { kShard, kGathered };
const char* to_string(TpOverlap t);
const char* to_string(SelectiveRecompute s);
const char* to_string(Fp8CastFusion f);
const char* to_string(CpRotation r);

// What an FP8 recipe of Transformer Engine runs besides its FP8 GEMMs (stacks.json
// "fp8_recipes"; docs/design.md, "FP8 recipes"): the quantization of every GEMM operand, in B of
// HBM traffic per element, the amax and scale bookkeeping, and whether tensor-parallel gathers
// move FP8 data.
struct Fp8Recipe {
  std::string name;
  // An activation cast by its own kernel; one whose cast is fused into the kernel that produces
  // it (the stack's fp8_cast_fusion says which), beyond what that kernel moves.
  double input_cast_bytes = 6, fused_input_cast_bytes = 6;
  double weight_cast_bytes = 5;  // once per step: cached across micro-batches
  // With FP8 primary weights (the stack's fp8_param_gather) the weight is already FP8: once per
  // step its transpose, in place of weight_cast_bytes.
  double primary_weight_bytes = 2;
  // An output gradient cast by its own kernel; one fused into the activation's backward (where
  // the stack's fp8_cast_fusion includes the activation).
  double grad_cast_bytes = 6, fused_grad_cast_bytes = 6;
  // Kernels per amax reduction (per model chunk and pass) that update the amax histories and
  // scales of the rank's FP8 modules.
  double scale_update_kernels = 0;
  // Amax all-reduces across the pipeline stage's ranks per model chunk and pass (delayed scaling).
  double amax_reductions_per_pass = 0;
  // One standard deviation of a data-parallel replica's arrival at an amax all-reduce against
  // the other replicas' (us): each reduction waits for the last of them (docs/design.md,
  // "Replica skew at amax reductions"). Fitted; 0 where the recipe reduces no amaxes.
  double replica_skew_us = 0;
  bool gather_fp8 = false;  // sequence-parallel all-gathers of GEMM inputs move FP8 (1 B)
  // A tensor gathered in FP8 (gather_fp8, sequence parallel) is quantized on the rank's shard,
  // data only, by a cast of its own or by the norm that produces it (negative where the norm's
  // FP8 output saves bytes), and transposed for the weight gradient once gathered.
  double gathered_cast_bytes = 5, gathered_fused_cast_bytes = 3, gathered_transpose_bytes = 2;
  // The forward GEMMs run with fast accumulation (the gradients' GEMMs split theirs).
  bool fprop_fast_accum = false;
};

struct StackSpec {
  std::string name, description;
  std::vector<std::string> sources;
  AttentionImpl attention = AttentionImpl::kFlash3;
  bool fused_softmax = true;  // unfused attention: scale, mask and softmax in one kernel
  bool dropout = false;       // attention-probability and hidden dropout
  bool fused_kernels = true;  // norms, activation, RoPE as one kernel each
  double eager_norm_bytes = 0, eager_act_bytes = 0, eager_rope_bytes = 0;  // when not fused
  TpOverlap tp_overlap = TpOverlap::kBackward;
  bool grad_reduce_overlap = true;
  bool p2p_blocking = false;  // the compute stream waits for its pipeline sends to complete
  double grad_reduce_bytes = 4;
  double optimizer_bytes_per_param = 30;
  // Accumulating each micro-batch's weight gradients into the main gradients as a separate
  // kernel (B per local parameter per micro-batch); 0 when the weight-gradient GEMM accumulates.
  double grad_accumulation_bytes = 0;
  // With --dtype fp8 the weights are kept in FP8 (Megatron-Core's fp8_param_gather), so the
  // distributed optimizer's or FSDP's parameter all-gathers move 1 B per parameter, not 2.
  bool fp8_param_gather = false;
  Fp8CastFusion fp8_cast_fusion = Fp8CastFusion::kNorm;
  SelectiveRecompute selective = SelectiveRecompute::kAttentionCore;
  CpRotation cp_rotation = CpRotation::kRing;
  SpSavedInput sp_saved_input = SpSavedInput::kShard;
  // Recomputation stops once backward's last saved tensor (FC2's input) is rebuilt: what
  // torch.compile's partitioner recomputes (and PyTorch's non-reentrant checkpoint with its early
  // stop on); Megatron's reentrant CheckpointFunction reruns the whole forward.
  bool recompute_early_stop = false;
  // The gated (Llama) layer's projections as matmuls of their own: wq, wk, wv and the MLP's w1,
  // w3 (torchtitan's model); else one QKV and one FC1 GEMM (Megatron-Core's linear_qkv and
  // linear_fc1). A GPT layer keeps its fused QKV either way.
  bool separate_projections = false;
  Fp8Recipe fp8;  // the recipe its FP8 GEMMs run under (--dtype fp8)
  // The stack's one constant fitted to step-level published runs (the model allows one per stack):
  // every compute and memory-bound kernel's time is multiplied by it, for what kernel-level
  // figures miss in a training node. 1 where the stack's runs need none.
  double kernel_time_factor = 1;
};

// How far the model-driven estimate was from one published run (kernels_db/calibration.json,
// written by `lumos bench estimate --write-residuals`): the basis of an estimate's range.
struct CalibrationResidual {
  std::string label, gpu, stack;
  double gpus = 0, params = 0;  // of the run: GPUs and model parameters
  double error_pct = 0;         // lumos step time against published, percent
  // Cross-validation's: the error with the fitted constants refitted without the run's source
  // (estimate/cross_validation.hpp); the basis of ranges when present.
  std::string source;
  bool has_left_out = false;
  double left_out_error_pct = 0;
};

// What the residuals' cross-validation measured: how often the range set by the left-out errors
// of other sources contained a run's published step time.
struct ResidualsCoverage {
  int rows = 0, inside = 0;  // runs with a range, and those whose published time fell inside
  std::string generated;     // date and commit of the table
};

// Energy and carbon figures (kernels_db/carbon.json), read by host/carbon/.
struct GridRegion {
  std::string name;
  double g_per_kwh = 0;
  int year = 0;       // of the data; 0: not stated by the source
  std::string basis;  // "lifecycle" or "direct"
  std::string source;
};

struct CarbonParams {
  // Share of (TDP - idle) a GPU draws while a kernel of the class runs.
  double compute_bound_fraction = 1, memory_bound_fraction = 0.6, comm_fraction = 0.3;
  double node_overhead_w_per_gpu = 250;  // CPUs, memory, NICs, switches, fans
  double pue = 1.2;
  double gpu_embodied_kg = 150, server_embodied_kg_per_gpu = 375, lifetime_y = 5;
  std::vector<GridRegion> regions;
  // Finds a region by name (case-insensitive); throws InputError listing the known ones.
  const GridRegion& region(const std::string& name) const;
};

struct KernelPattern {
  std::string kernel_class;  // gemm, attention_fwd, attention_bwd, comm, norm, softmax, ...
  std::vector<std::string> contains;  // any of these substrings (case-sensitive)
  std::vector<std::string> prefixes;  // or any of these prefixes
};

struct KernelsDb {
  std::string origin;  // "embedded" or the folder it was read from
  std::vector<GpuSpec> gpus;
  GemmParams gemm;
  AttentionParams attention;
  MemoryBoundParams membound;
  TrainingParams training;
  NcclParams nccl;
  std::vector<KernelPattern> kernel_patterns;  // first match wins
  std::map<std::string, StackSpec> stacks;
  std::map<std::string, Fp8Recipe> fp8_recipes;
  std::string default_stack;
  std::vector<CalibrationResidual> residuals;
  ResidualsCoverage coverage;
  CarbonParams carbon;

  // Finds a GPU by name or alias (case-insensitive); throws InputError listing the known ones.
  const GpuSpec& gpu(const std::string& name) const;
  const Topology& topology(const std::string& name) const;
  const Topology& default_topology_for(const GpuSpec& g) const;
  // Finds a software stack by name; throws InputError listing the known ones.
  const StackSpec& stack(const std::string& name) const;
  std::string stack_names() const;  // "a, b, c"
};

// The files compiled into the binary.
const KernelsDb& embedded_db();
// Reads every kernels_db file from a folder.
KernelsDb load_db(const std::string& dir);
// Parses one set of file contents (name -> JSON text); used by both of the above and by tests.
KernelsDb parse_db(const std::map<std::string, std::string>& files, const std::string& origin);

const char* to_string(Arch a);

}  // namespace lumos::cost
