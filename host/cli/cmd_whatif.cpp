// lumos whatif [TRACE]: replay a trace under a grid of variants at once (other GPUs, per-class
// speed-ups), report step time and GPU energy per variant, and mark the Pareto front.
#include <cxxopts.hpp>

#include <cstdio>
#include <iostream>
#include <numeric>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/json_writer.hpp"
#include "cost/kernels_db.hpp"
#include "engine/engine.hpp"
#include "replay/pareto.hpp"
#include "whatif/gemm_pricing.hpp"
#include "whatif/gpu_variants.hpp"

namespace lumos::cli {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

int class_of(const std::string& name) {
  for (int k = 1; k < replay::kNumNodeClasses; ++k)
    if (name == graph::to_string(static_cast<graph::NodeClass>(k))) return k;
  throw InputError("lumos whatif: --speed: unknown class '" + name +
                   "' (expected cpu, compute, comm or memory)");
}

}  // namespace

int cmd_whatif(int argc, char** argv) {
  cxxopts::Options o(
      "lumos whatif",
      "Replay a trace under many variants at once: other GPUs (--gpus) times per-class speed-ups "
      "(--speed), with step time, GPU energy and the Pareto front over both.");
  o.positional_help("[TRACE | GRAPH.lgraph]");
  o.add_options()("input", "trace or graph (default: the embedded demo)",
                  cxxopts::value<std::string>())(
      "traced-gpu", "GPU the trace ran on (default: the trace's deviceProperties, else h100)",
      cxxopts::value<std::string>())("gpus",
                                     "comma-separated target GPUs (default: the traced one)",
                                     cxxopts::value<std::string>())(
      "speed", "speed-up axes, ';'-separated, e.g. 'compute=1,2;comm=0.5,1,2'",
      cxxopts::value<std::string>())("backend", "auto, reference, cpu or cuda",
                                     cxxopts::value<std::string>()->default_value("auto"))(
      "csv", "write the table as CSV", cxxopts::value<std::string>())("json", "print JSON")(
      "h,help", "show this help");
  o.parse_positional({"input"});
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  const LoadedInput in = load_input(a.count("input") ? a["input"].as<std::string>() : "");
  const cost::KernelsDb& db = cost::embedded_db();
  std::string traced = a.count("traced-gpu") ? a["traced-gpu"].as<std::string>() : "";
  if (traced.empty() && in.table && !in.table->gpu_name.empty()) {
    try {
      traced = db.gpu(in.table->gpu_name).name;
    } catch (const InputError&) {
      throw InputError("lumos whatif: the trace ran on '" + in.table->gpu_name +
                       "', which kernels_db does not describe; pass --traced-gpu");
    }
  }
  if (traced.empty()) traced = "h100";
  const std::vector<std::string> gpus =
      a.count("gpus") ? split(a["gpus"].as<std::string>(), ',') : std::vector<std::string>{traced};
  LUMOS_EXPECT(!gpus.empty(), "lumos whatif: --gpus names no GPU");
  // Cartesian product: GPUs x each speed axis.
  replay::VariantBatch batch = whatif::variants_from_gpus(db, traced, gpus);
  // Which of --gpus each variant runs on, carried through the product (labels are for people).
  std::vector<const cost::GpuSpec*> spec;
  for (const std::string& name : gpus) spec.push_back(&db.gpu(name));
  std::vector<uint32_t> gpu_of(batch.count);
  std::iota(gpu_of.begin(), gpu_of.end(), 0u);
  if (a.count("speed")) {
    for (const std::string& axis : split(a["speed"].as<std::string>(), ';')) {
      const size_t eq = axis.find('=');
      LUMOS_EXPECT(eq != std::string::npos,
                   "lumos whatif: --speed: expected class=f1,f2,..., got '" + axis + "'");
      const int c = class_of(axis.substr(0, eq));
      std::vector<float> factors;
      for (const std::string& f : split(axis.substr(eq + 1), ',')) {
        char* end = nullptr;
        const double x = std::strtod(f.c_str(), &end);
        LUMOS_EXPECT(end && *end == '\0' && x > 0,
                     "lumos whatif: --speed: '" + f + "' is not a positive factor");
        factors.push_back(static_cast<float>(x));
      }
      LUMOS_EXPECT(!factors.empty(), "lumos whatif: --speed: axis '" + axis + "' has no factors");
      // A grid is a product: keep it to a size one launch can hold.
      const uint64_t total = static_cast<uint64_t>(batch.count) * factors.size();
      LUMOS_EXPECT(total <= 10'000'000, "lumos whatif: the grid has " + std::to_string(total) +
                                            " variants; at most 10,000,000 per run");
      replay::VariantBatch next = replay::VariantBatch::identity(static_cast<uint32_t>(total));
      next.labels.clear();
      std::vector<uint32_t> next_gpu_of;
      for (uint32_t v = 0; v < batch.count; ++v)
        for (size_t f = 0; f < factors.size(); ++f) {
          const uint32_t w = v * static_cast<uint32_t>(factors.size()) + static_cast<uint32_t>(f);
          for (int k = 0; k < replay::kNumNodeClasses; ++k) next.speed[k][w] = batch.speed[k][v];
          next.speed[c][w] *= factors[f];
          std::ostringstream label;
          label << batch.labels[v] << " " << axis.substr(0, eq) << "x" << factors[f];
          next.labels.push_back(label.str());
          next_gpu_of.push_back(gpu_of[v]);
        }
      batch = std::move(next);
      gpu_of = std::move(next_gpu_of);
    }
  }
  // GEMMs with known shapes are priced per GPU by the cost model (the trace is needed for shapes).
  std::vector<std::string> variant_gpu;
  for (uint32_t g : gpu_of) variant_gpu.push_back(spec[g]->name);
  std::optional<replay::GemmPricing> pricing;
  if (in.table) pricing = whatif::gemm_pricing(in.graph, *in.table, db, traced, variant_gpu);
  const replay::BatchResult r =
      engine::batch_replay(in.graph, batch, engine::parse_backend(a["backend"].as<std::string>()),
                           pricing && pricing->priced_nodes() > 0 ? &*pricing : nullptr);
  // Energy of one GPU over the replayed time: idle power throughout, plus (TDP - idle) while busy.
  std::vector<double> energy_j(batch.count);
  for (uint32_t v = 0; v < batch.count; ++v) {
    const cost::GpuSpec& gpu = *spec[gpu_of[v]];
    const double busy_us = r.busy_us[static_cast<int>(graph::NodeClass::kCompute)][v] +
                           r.busy_us[static_cast<int>(graph::NodeClass::kComm)][v] +
                           r.busy_us[static_cast<int>(graph::NodeClass::kMemory)][v];
    energy_j[v] = (gpu.idle_w * r.makespan_us[v] +
                   (gpu.tdp_w - gpu.idle_w) * std::min(busy_us, r.makespan_us[v])) *
                  1e-6;
  }
  const std::vector<uint32_t> front = replay::pareto_front({r.makespan_us, energy_j});
  std::vector<bool> on_front(batch.count, false);
  for (uint32_t v : front) on_front[v] = true;
  auto write_csv = [&](std::ostream& os) {
    os << "variant,replayed_us,energy_j,cp_compute_us,cp_comm_us,pareto\n";
    for (uint32_t v = 0; v < batch.count; ++v)
      os << '"' << batch.labels[v] << "\"," << r.makespan_us[v] << ',' << energy_j[v] << ','
         << r.cp_compute_us[v] << ',' << r.cp_comm_us[v] << ',' << (on_front[v] ? 1 : 0) << '\n';
  };
  if (a.count("csv")) write_file_atomically(a["csv"].as<std::string>(), write_csv);
  if (a.count("json")) {
    common::JsonWriter w(std::cout);
    w.begin_object()
        .field("input", in.label)
        .field("traced_gpu", traced)
        .field("backend", r.backend);
    w.key("variants").begin_array();
    for (uint32_t v = 0; v < batch.count; ++v) {
      w.begin_object()
          .field("label", batch.labels[v])
          .field("replayed_us", r.makespan_us[v])
          .field("energy_j", energy_j[v]);
      w.field("cp_compute_us", r.cp_compute_us[v])
          .field("cp_comm_us", r.cp_comm_us[v])
          .field("pareto", static_cast<bool>(on_front[v]));
      w.end_object();
    }
    w.end_array().end_object();
    std::cout << '\n';
  } else {
    std::printf(
        "lumos whatif: %s, traced on %s, %u variants (%s backend); %u GEMM kernels priced by the "
        "cost model\n\n",
        in.label.c_str(), traced.c_str(), batch.count, r.backend.c_str(),
        pricing ? pricing->priced_nodes() : 0u);
    std::printf("%-32s %14s %12s %14s %12s  %s\n", "variant", "replayed_us", "energy_J",
                "cp_compute_us", "cp_comm_us", "pareto");
    for (uint32_t v = 0; v < batch.count; ++v)
      std::printf("%-32s %14.1f %12.3f %14.1f %12.1f  %s\n", batch.labels[v].c_str(),
                  r.makespan_us[v], energy_j[v], r.cp_compute_us[v], r.cp_comm_us[v],
                  on_front[v] ? "*" : "");
  }
  return 0;
}

}  // namespace lumos::cli
