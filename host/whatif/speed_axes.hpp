// Per-class speed factors as users write them: `compute=2,comm=0.5` for one variant (replay
// --speed) and `compute=1,2;comm=0.5,1,2` for the axes of a grid (whatif --speed).
#pragma once
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "replay/variant_batch.hpp"

namespace lumos::whatif {

// A factor divides a class's durations: 2 = twice as fast. Factors far outside what hardware
// differs by are mistakes, not what-ifs.
constexpr double kMinSpeedFactor = 1e-6;
constexpr double kMaxSpeedFactor = 1e6;

struct SpeedAxis {
  graph::NodeClass cls = graph::NodeClass::kCompute;
  std::string name;  // as written (cpu, compute, comm, memory)
  std::vector<float> factors;
};

// `option` names the flag in errors ("lumos whatif: --speed").
std::vector<SpeedAxis> parse_speed_axes(const std::string& spec, const std::string& option);

// One variant with the given factors (classes not named run at 1).
replay::VariantBatch parse_speed_variant(const std::string& spec, const std::string& option);

}  // namespace lumos::whatif
