// Transplant: predict step N from step M's graph. Step M's structure and lags, step N's measured
// durations (matched by position among same-named events per thread and stream) and step N's
// initial conditions (when each thread and stream became free). The honest test of the
// dependency model: reproducing a step from its own durations proves little. Nodes of M that
// step N does not run take no time (M's duration would charge N for work it did not do); work
// that only N runs cannot be placed, so the matching is reported both ways.
#pragma once
#include <string>
#include <vector>

#include "graph/graph_builder.hpp"
#include "trace/event_table.hpp"

namespace lumos::whatif {

struct TransplantResult {
  std::string from, to;  // ProfilerStep names
  double predicted_us = 0;
  double measured_us = 0;  // step N as measured
  double error_pct = 0;
  double naive_us = 0;  // the naive guess: step N lasts as long as step M
  double naive_error_pct = 0;
  double matched_fraction = 0;  // nodes of M that found their match in N
  double covered_fraction = 0;  // nodes of N that found their match in M
  // Set when either fraction is below kStructureThreshold: the steps differ in structure, and
  // the prediction misses what only one of them runs. One line per thread or stream where they
  // differ most ("stream 0/7: 12 of M's 40 nodes missing in N, 30 of N's 58 missing in M").
  std::vector<std::string> differences;
};

constexpr double kStructureThreshold = 0.9;

// The one-line warning for a transplant whose steps differ in structure, "" when they do not.
std::string structure_warning(const TransplantResult& r);

// from_step and to_step are the N of ProfilerStep#N. Throws InputError when either is missing.
TransplantResult transplant(const trace::EventTable& t, int64_t from_step, int64_t to_step,
                            const graph::BuildOptions& opt = {});

}  // namespace lumos::whatif
