#include "whatif/grid.hpp"

#include <sstream>

#include "common/count_text.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/kernels_db.hpp"
#include "whatif/gpu_variants.hpp"

namespace lumos::whatif {

std::vector<std::string> parse_gpu_axis(const std::string& spec, const std::string& option) {
  if (spec.empty()) throw InputError(option + " names no GPU");
  return common::parse_name_list(spec, option);
}

Grid build_grid(const cost::KernelsDb& db, const std::string& traced_gpu,
                const std::vector<std::string>& gpus, const std::vector<SpeedAxis>& axes,
                uint64_t graph_nodes) {
  LUMOS_EXPECT(!gpus.empty(), "lumos whatif: --gpus names no GPU");
  double variants = static_cast<double>(gpus.size());
  for (const SpeedAxis& axis : axes) variants *= static_cast<double>(axis.factors.size());
  LUMOS_EXPECT(variants <= static_cast<double>(kMaxGridVariants),
               "lumos whatif: the grid has " + std::to_string(static_cast<uint64_t>(variants)) +
                   " variants; at most 10,000,000 per run");
  const double updates = variants * static_cast<double>(graph_nodes);
  LUMOS_EXPECT(updates <= kMaxGridNodeVariants,
               "lumos whatif: " + std::to_string(static_cast<uint64_t>(variants)) +
                   " variants of a " + std::to_string(graph_nodes) + "-node graph are " +
                   strprintf("%.3g", updates) +
                   " node updates; at most 2e10 per run (fewer variants, or split the grid)");
  Grid grid;
  grid.batch = variants_from_gpus(db, traced_gpu, gpus);
  for (const std::string& name : gpus) grid.variant_gpu.push_back(db.gpu(name).name);
  grid.compute_speed.assign(gpus.size(), 1.0);
  for (const SpeedAxis& axis : axes) {
    const uint64_t total = static_cast<uint64_t>(grid.batch.count) * axis.factors.size();
    const int c = static_cast<int>(axis.cls);
    replay::VariantBatch next = replay::VariantBatch::identity(static_cast<uint32_t>(total));
    next.labels.clear();
    std::vector<std::string> next_gpu;
    std::vector<double> next_speed;
    for (uint32_t v = 0; v < grid.batch.count; ++v)
      for (size_t f = 0; f < axis.factors.size(); ++f) {
        const uint32_t w =
            v * static_cast<uint32_t>(axis.factors.size()) + static_cast<uint32_t>(f);
        for (int k = 0; k < replay::kNumNodeClasses; ++k) next.speed[k][w] = grid.batch.speed[k][v];
        next.speed[c][w] *= axis.factors[f];
        std::ostringstream label;
        label << grid.batch.labels[v] << " " << axis.name << "x" << axis.factors[f];
        next.labels.push_back(label.str());
        next_gpu.push_back(grid.variant_gpu[v]);
        next_speed.push_back(grid.compute_speed[v] *
                             (axis.cls == graph::NodeClass::kCompute ? axis.factors[f] : 1.0));
      }
    grid.batch = std::move(next);
    grid.variant_gpu = std::move(next_gpu);
    grid.compute_speed = std::move(next_speed);
  }
  return grid;
}

}  // namespace lumos::whatif
