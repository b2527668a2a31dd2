// A trace-driven sweep (`lumos sweep --trace`): the traced job's configuration is the default of
// every axis not given, and every configuration's kernels take the trace's calibration (as
// `lumos whatif` edits do), so that each row equals `lumos whatif` of that structural edit.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/trace_structural.hpp"
#include "graph/load_input.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::estimate {

// The loaded trace and its calibration, which the spec's adjust_costs uses while the sweep runs.
struct TracedSweep {
  graph::LoadedInput input;
  CalibratedTrace traced;
};

// Loads the trace (a file or a folder of rank traces), recognises the job with `spec->model`'s
// dimensions and calibrates it, then sets `spec`: the traced model and stack, the traced value of
// every axis `given` says was not given, and the calibration on every configuration. The
// returned object and `db` must outlive the sweep. Throws InputError as calibrate_trace, or when
// the stack axis names more than the traced job's one stack.
// `hints`: what the user says the traced job is (--traced, --group), over the trace's word.
std::unique_ptr<TracedSweep> trace_sweep(const std::string& trace,
                                         const std::function<bool(const char*)>& given,
                                         const cost::KernelsDb& db, sweep::SweepSpec* spec,
                                         const whatif::JobHints& hints = {});

}  // namespace lumos::estimate
