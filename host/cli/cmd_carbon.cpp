// lumos carbon: one configuration's energy and carbon, from a model-driven estimate or from a
// trace (its replayed steps, or a what-if of them on another GPU or at other speeds), on a
// region's annual intensity or an hourly series with the best start in a window.
#include <cxxopts.hpp>

#include <iostream>
#include <string>

#include "carbon/grid_series.hpp"
#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/decimal_options.hpp"
#include "cli/help_text.hpp"
#include "cli/layout_options.hpp"
#include "cli/unexpected_args.hpp"
#include "common/error.hpp"
#include "common/physical_ranges.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/training_carbon.hpp"
#include "report/carbon_report.hpp"

namespace lumos::cli {

int cmd_carbon(int argc, char** argv) {
  // 2^20 GPUs: the most model::check_layout accepts.
  constexpr CountOption kGpus{"gpus", 1, int64_t{1} << 20};
  cxxopts::Options o("lumos carbon",
                     "Energy and carbon of a training run: the step from an estimate (the "
                     "estimate's options) or a trace (--trace), its energy by part, operational "
                     "carbon on a grid region or an hourly series (and the best start), embodied "
                     "carbon beside it");
  layout_options(o);
  o.add_options()("tokens", "tokens to train (an estimate)", decimal_value("300e9"))(
      "trace", "account for a traced job instead: a Kineto trace or .lgraph (its steps replayed)",
      cxxopts::value<std::string>())("traced-gpu",
                                     "with --trace: the GPU it ran on (default: the trace's "
                                     "deviceProperties, else h100)",
                                     cxxopts::value<std::string>())(
      "on-gpu", "with --trace: what if it ran on this GPU (as lumos whatif --gpus)",
      cxxopts::value<std::string>())(
      "speed", "with --trace: what if kernel classes ran faster, e.g. compute=2,comm=0.5",
      cxxopts::value<std::string>())(
      "steps", "with --trace: steps in the run (default: the traced steps)", decimal_value())(
      kGpus.name, count_help("with --trace: GPUs in the job (default: the traced ranks)", kGpus),
      count_value())("region", "grid region in kernels_db/carbon.json (default: world)",
                     cxxopts::value<std::string>())(
      "grid-series", "hourly grid intensity CSV (Electricity Maps export or timestamp,gCO2eq/kWh)",
      cxxopts::value<std::string>())("basis", "with an Electricity Maps export: lifecycle | direct",
                                     cxxopts::value<std::string>()->default_value("lifecycle"))(
      "start", "when the run starts (UTC; default: the series' start)",
      cxxopts::value<std::string>())(
      "window-end", "latest start to consider: also report the start that emits least",
      cxxopts::value<std::string>())(
      "pue", "the site's PUE, in [1, 5] (default: kernels_db/carbon.json's)", decimal_value());
  const auto a = parse_options(o, argc, argv);
  if (a.count("help")) {
    std::cout << help_with_examples(
                     o, {"lumos carbon --model gpt3-175b --gpu h100 --tp 8 --pp 8 --dp 16 "
                         "--gbs 1536 --region fr",
                         "lumos carbon --trace trace.json.gz --steps 100000 --region us",
                         "lumos carbon --model llama3-70b --grid-series es.csv --start 2024-03-01 "
                         "--window-end 2024-03-08  # the best start that week"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(a, "lumos carbon");
  LUMOS_EXPECT(!(a.count("region") && a.count("grid-series")),
               "lumos carbon: give --region or --grid-series, not both");
  LUMOS_EXPECT(a.count("grid-series") || (!a.count("start") && !a.count("window-end")),
               "lumos carbon: --start and --window-end go with --grid-series");
  const bool traced = a.count("trace") > 0;
  for (const char* k : {"traced-gpu", "steps", "gpus", "on-gpu", "speed"})
    LUMOS_EXPECT(traced || !a.count(k), std::string("lumos carbon: --") + k + " goes with --trace");
  LUMOS_EXPECT(!traced || !a.count("tokens"), "lumos carbon: --tokens goes with an estimate");
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  estimate::CarbonRequest req;
  req.pue = a.count("pue") ? expect_in_range(kPueRange, decimal_of(a, "pue", "lumos carbon"),
                                             "lumos carbon: --pue")
                           : db.carbon.pue;
  if (a.count("grid-series")) {
    const std::string basis = a["basis"].as<std::string>();
    LUMOS_EXPECT(basis == "lifecycle" || basis == "direct",
                 "--basis " + basis + ": expected lifecycle or direct");
    req.grid_series = a["grid-series"].as<std::string>();
    req.basis =
        basis == "direct" ? carbon::IntensityBasis::kDirect : carbon::IntensityBasis::kLifecycle;
  }
  if (a.count("region")) req.region = a["region"].as<std::string>();
  if (a.count("start")) req.start = a["start"].as<std::string>();
  if (a.count("window-end")) req.window_end = a["window-end"].as<std::string>();
  if (traced) {
    req.trace = a["trace"].as<std::string>();
    if (a.count("traced-gpu")) req.traced_gpu = a["traced-gpu"].as<std::string>();
    if (a.count("on-gpu")) req.on_gpu = a["on-gpu"].as<std::string>();
    if (a.count("speed")) req.speed = a["speed"].as<std::string>();
    if (a.count("steps")) req.steps = decimal_of(a, "steps", "lumos carbon");
    if (a.count("gpus")) req.gpus = count_of(a, kGpus, "lumos carbon: ");
  } else {
    req.tokens = decimal_of(a, "tokens", "lumos carbon");
    req.estimate = request_from(a);
    estimate::check_named_layout(
        req.estimate.cfg,
        db.stack(req.estimate.cfg.stack.empty() ? db.default_stack : req.estimate.cfg.stack));
  }
  const estimate::CarbonAnswer ans = estimate::run_carbon(req, db);
  if (!ans.warning.empty()) std::cerr << "lumos carbon: warning: " << ans.warning << '\n';
  if (a.count("json"))
    report::carbon_json(std::cout, ans);
  else
    report::carbon_text(std::cout, ans, db.carbon);
  return 0;
}

}  // namespace lumos::cli
