// `lumos carbon`: one training run's energy and carbon, its step from a model-driven estimate or
// from a trace (its replayed steps, or a what-if of them on another GPU or at other speeds), on a
// region's annual intensity or an hourly series (and the start in a window that emits least),
// embodied carbon beside it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "carbon/energy.hpp"
#include "carbon/grid_series.hpp"
#include "estimate/estimate.hpp"

namespace lumos::estimate {

struct CarbonRequest {
  double pue = 1.2;
  // The grid: an hourly series when `grid_series` is set, else a kernels_db region.
  std::string region = "world";
  std::optional<std::string> grid_series;
  carbon::IntensityBasis basis = carbon::IntensityBasis::kLifecycle;
  std::optional<std::string> start;       // UTC; default: the series' start
  std::optional<std::string> window_end;  // UTC: also find the start that emits least
  // The run: a trace's steps when `trace` is set ("" = the embedded demo), else an estimate's.
  std::optional<std::string> trace;
  std::string traced_gpu;             // "" = the trace's deviceProperties, else h100
  std::optional<std::string> on_gpu;  // what if it ran on this GPU
  std::optional<std::string> speed;   // or with these per-class speed-ups
  std::optional<double> steps;        // default: the traced steps
  std::optional<int64_t> gpus;        // default: the traced ranks
  EstimateRequest estimate;
  double tokens = 300e9;  // an estimate's run: tokens to train
};

struct CarbonAnswer {
  std::string subject;  // what was accounted for, in one line
  double gpus = 0, steps = 0, step_us = 0, hours = 0, pue = 0;
  carbon::EnergyParts per_gpu_step;
  double grid_g_per_kwh = 0;
  std::string grid;  // where the intensity comes from
  carbon::CarbonAccount account;
  std::optional<carbon::BestStart> best;
  // Set when a trace without tables (a .lgraph file) moves onto another GPU.
  std::string warning;
};

// Throws InputError for a bad grid, GPU, count or estimate request.
CarbonAnswer run_carbon(const CarbonRequest& req, const cost::KernelsDb& db);

}  // namespace lumos::estimate
