#include "sweep/option_text.hpp"

#include <tuple>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/physical_ranges.hpp"
#include "cost/size_units.hpp"

namespace lumos::sweep {

namespace {

std::string named(const OptionText& o, const char* option) {
  return o.name ? o.name(option) : std::string("--") + option;
}

std::vector<int> parse_switch_axis(const std::string& text, const std::string& what) {
  std::vector<int> out;
  for (const std::string& s : parse_name_axis(text, what)) {
    LUMOS_EXPECT(s == "on" || s == "off" || s == "auto",
                 what + ": '" + s + "': expected on, off or auto");
    out.push_back(s == "auto" ? -1 : s == "on" ? 1 : 0);
  }
  return out;
}

// The axes that shape each configuration's graph.
void parse_layout_axes(const OptionText& o, SweepSpec* spec) {
  const auto& given = o.given;
  const auto& text = o.text;
  if (given("gpus")) spec->total_gpus = parse_int_axis(text("gpus"), named(o, "gpus"));
  if (!given("gpus") && !given("dp")) spec->total_gpus = parse_int_axis("256..1024", "--gpus");
  if (given("dp")) spec->dp = parse_int_axis(text("dp"), named(o, "dp"));
  LUMOS_EXPECT(!(given("gpus") && given("dp")),
               "lumos sweep: give --gpus (dp follows) or --dp, not both");
  spec->tp = parse_int_axis(text("tp"), named(o, "tp"));
  spec->cp = parse_int_axis(text("cp"), named(o, "cp"));
  spec->pp = parse_int_axis(text("pp"), named(o, "pp"));
  spec->interleave = parse_int_axis(text("interleave"), named(o, "interleave"));
  spec->mbs = parse_int_axis(text("mbs"), named(o, "mbs"));
  spec->gbs = parse_int_axis(text("gbs"), named(o, "gbs"));
  spec->recompute.clear();
  for (const auto& r : parse_name_axis(text("recompute"), named(o, "recompute")))
    spec->recompute.push_back(model::parse_recompute(r));
  spec->sequence_parallel = parse_switch_axis(text("sp"), named(o, "sp"));
  spec->distributed_optimizer = parse_switch_axis(text("dist-opt"), named(o, "dist-opt"));
  if (given("stack")) spec->stacks = parse_name_axis(text("stack"), named(o, "stack"));
  spec->dtypes.clear();
  for (const std::string& d : parse_name_axis(text("dtype"), named(o, "dtype")))
    spec->dtypes.push_back(cost::parse_training_dtype(d, named(o, "dtype")));
  spec->fsdp.clear();
  for (int f : parse_switch_axis(text("fsdp"), named(o, "fsdp"))) {
    LUMOS_EXPECT(f >= 0, named(o, "fsdp") + ": expected on or off");
    spec->fsdp.push_back(f);
  }
}

// The axes one graph serves: GPU, network, kernel speed and site.
void parse_hardware_axes(const OptionText& o, SweepSpec* spec) {
  const auto& given = o.given;
  const auto& text = o.text;
  spec->gpus = parse_name_axis(text("gpu"), named(o, "gpu"));
  if (given("topology")) spec->topologies = parse_name_axis(text("topology"), named(o, "topology"));
  if (given("speed")) spec->speed = whatif::parse_speed_axes(text("speed"), named(o, "speed"));
  if (given("nic-bandwidth"))
    spec->nic_gbps = parse_bandwidth_axis(text("nic-bandwidth"), named(o, "nic-bandwidth"));
  spec->regions = parse_name_axis(text("region"), named(o, "region"));
  if (given("pue")) {
    spec->pue.clear();
    for (const std::string& item : parse_name_axis(text("pue"), named(o, "pue"))) {
      const std::optional<double> v = parse_finite(item);
      LUMOS_EXPECT(
          v, named(o, "pue") + " " + item + ": expected a number in " + range_text(kPueRange));
      spec->pue.push_back(expect_in_range(kPueRange, *v, named(o, "pue") + " " + item));
    }
  }
  if (given("gpus-per-node"))
    spec->gpus_per_node = parse_int_axis(text("gpus-per-node"), named(o, "gpus-per-node"));
  if (given("nvlink-bandwidth"))
    spec->nvlink_gbps =
        parse_bandwidth_axis(text("nvlink-bandwidth"), named(o, "nvlink-bandwidth"));
}

}  // namespace

const std::vector<std::string>& sweep_file_options() {
  static const std::vector<std::string> kOptions = {"gpus",
                                                    "dp",
                                                    "tp",
                                                    "cp",
                                                    "pp",
                                                    "interleave",
                                                    "mbs",
                                                    "gbs",
                                                    "recompute",
                                                    "sp",
                                                    "dist-opt",
                                                    "fsdp",
                                                    "stack",
                                                    "dtype",
                                                    "gpu",
                                                    "topology",
                                                    "nic-bandwidth",
                                                    "gpus-per-node",
                                                    "nvlink-bandwidth",
                                                    "region",
                                                    "pue",
                                                    "tokens",
                                                    "objectives",
                                                    "trace",
                                                    "speed"};
  return kOptions;
}

void parse_axes(const OptionText& o, SweepSpec* spec) {
  parse_layout_axes(o, spec);
  parse_hardware_axes(o, spec);
}

double parse_tokens(const std::string& t, const std::string& file) {
  const std::optional<double> v = parse_finite(t);
  LUMOS_EXPECT(v.has_value(), file + ": tokens: '" + t + "' is not a number");
  return *v;
}

std::pair<uint32_t, uint32_t> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  LUMOS_EXPECT(slash != std::string::npos, "--shard " + s + ": expected i/n, e.g. 0/4");
  const uint64_t i = parse_count(s.substr(0, slash), "--shard");
  const uint64_t n = parse_count(s.substr(slash + 1), "--shard");
  LUMOS_EXPECT(n >= 1 && n <= 100000 && i < n,
               "--shard " + s + ": expected i/n with 0 <= i < n <= 100000");
  return {static_cast<uint32_t>(i), static_cast<uint32_t>(n)};
}

SweepOptions parse_run_options(const std::optional<std::string>& shard, int threads,
                               const std::string& memory, const std::string& fold) {
  SweepOptions opt;
  if (shard) std::tie(opt.shard, opt.shards) = parse_shard(*shard);
  opt.threads = threads;
  opt.memory_budget_bytes = cost::parse_bytes(memory, "--memory");
  LUMOS_EXPECT(opt.memory_budget_bytes >= 64.0 * 1024 * 1024,
               "lumos sweep: --memory must be at least 64MiB");
  LUMOS_EXPECT(opt.threads >= 0 && opt.threads <= 4096, "--threads: expected 0 to 4096");
  LUMOS_EXPECT(fold == "on" || fold == "off", "--fold " + fold + ": expected on or off");
  opt.fold_layers = fold == "on";
  return opt;
}

}  // namespace lumos::sweep
