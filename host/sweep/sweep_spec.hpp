// What `lumos sweep` explores: a model, axes of values (layouts, GPU types, networks, software
// stacks) and constraints, expanded into configurations in one deterministic order. An axis is a
// list ("1,2,4"), a doubling range ("64..1024": 64, 128, ..., 1024) or a stepped range
// ("1:9:2": 1, 3, 5, 7, 9).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cost/dtype.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"
#include "replay/variant_batch.hpp"
#include "whatif/speed_axes.hpp"

namespace lumos::sweep {

struct SweepSpec {
  model::ModelSpec model;
  // Layout axes. total_gpus, when given, fixes the data-parallel degree of each layout
  // (gpus / (tp x cp x pp)); otherwise dp is an axis.
  std::vector<int64_t> total_gpus;
  std::vector<int64_t> tp = {1, 2, 4, 8}, cp = {1}, pp = {1, 2, 4, 8}, dp = {1};
  std::vector<int64_t> interleave = {1}, mbs = {1}, gbs = {64};
  std::vector<model::Recompute> recompute = {model::Recompute::kNone};
  std::vector<int> sequence_parallel = {-1};      // 1, 0; -1: on when tp > 1
  std::vector<int> distributed_optimizer = {-1};  // 1, 0; -1: on when dp x cp > 1 without FSDP
  std::vector<int> fsdp = {0};                    // 1, 0: fully sharded data parallel
  std::vector<std::string> stacks = {""};         // "" = the default stack
  std::vector<cost::Dtype> dtypes = {cost::Dtype::kBf16};
  // Hardware axes: these vary within a graph structure (one graph serves them all).
  std::vector<std::string> gpus = {"h100"};
  std::vector<std::string> topologies = {""};  // "" = each GPU's default topology
  std::vector<double> nic_gbps = {0};          // NIC line rate, GB/s; 0 = the topology's
  std::vector<int64_t> gpus_per_node = {0};    // 0 = the topology's
  std::vector<double> nvlink_gbps = {0};       // per direction, GB/s; 0 = the GPU's
  // Where it runs: grid regions of kernels_db/carbon.json, and the site's PUE (0 = carbon.json's).
  std::vector<std::string> regions = {"world"};
  std::vector<double> pue = {0};
  // Per-class kernel speed-ups (whatif --speed syntax), a Cartesian product; none: all at 1.
  std::vector<whatif::SpeedAxis> speed;
  double tokens_to_train = 300e9;       // for time to train and GPU-hours
  model::StepCostOptions cost_options;  // idealizations (`lumos estimate --free-comm`)
  // Applied to every configuration's priced kernels before its graph is built: a trace's
  // calibration in a trace-driven sweep (estimate/trace_structural.hpp), as `lumos whatif` does.
  std::function<void(model::StepCosts&)> adjust_costs;
};

// One configuration of the sweep, in its order.
struct SweepVariant {
  uint64_t index = 0;
  model::ParallelConfig cfg;  // gpus_per_node not yet set: it comes with the topology
  std::string gpu, topology;
  double nic_gbps = 0;     // 0: the topology's
  int gpus_per_node = 0;   // 0: the topology's
  double nvlink_gbps = 0;  // 0: the GPU's
  std::string region = "world";
  double pue = 0;  // 0: kernels_db's
  // Each node class's speed factor (2 = its kernels twice as fast), and how the CSV names it.
  std::array<float, replay::kNumNodeClasses> speed{1, 1, 1, 1, 1};
  std::string speed_label = "1";
};

// Parses an axis of integers; `what` names it in errors (e.g. "--tp"). Throws InputError for an
// empty axis, a value that is not a positive integer, or a range that is empty or too long
// (more than 4096 values).
std::vector<int64_t> parse_int_axis(const std::string& text, const std::string& what);
// Parses a list of bandwidths with their units ("100Gbps,400Gbps", "25GB/s"), in GB/s.
std::vector<double> parse_bandwidth_axis(const std::string& text, const std::string& what);
// Parses a comma-separated list of names; throws InputError when it is empty or has an empty
// name.
std::vector<std::string> parse_name_axis(const std::string& text, const std::string& what);
// Parses a non-negative integer of at most 15 digits; `what` names it in the error.
uint64_t parse_count(const std::string& text, const std::string& what);

// The most configurations one sweep expands (each takes a few hundred bytes before it runs).
constexpr uint64_t kMaxSweepConfigurations = 10'000'000;

// How many configurations expand() gives, computed from the axes without expanding them: the
// layouts (only those whose degrees divide a --gpus total) times every other axis's length.
// Counting stops once it passes `stop_above`, returning a value above it (UINT64_MAX when the
// product overflows).
uint64_t count_configurations(const SweepSpec& spec, uint64_t stop_above = UINT64_MAX - 1);

// Every configuration of the spec in a fixed order (layout axes outermost, then stack, then GPU
// and topology innermost, so that configurations sharing a graph are adjacent). Layouts whose
// degrees do not divide total_gpus are left out (they are not configurations of that total).
// Throws InputError, before expanding anything, when the spec has more than `limit`
// configurations.
std::vector<SweepVariant> expand(const SweepSpec& spec, uint64_t limit = kMaxSweepConfigurations);

}  // namespace lumos::sweep
