// Renders `lumos bench` answers as text or JSON: the batch replay's throughput, and the
// calibration check against published runs with the estimate's latency, and the check against
// the published columns no constant is fitted to.
#pragma once
#include <ostream>

#include "engine/batch_benchmark.hpp"
#include "estimate/calibration_check.hpp"

namespace lumos::report {

void batch_benchmark_text(std::ostream& os, const engine::BatchBenchmark& b);
void batch_benchmark_json(std::ostream& os, const engine::BatchBenchmark& b);

void calibration_text(std::ostream& os, const estimate::CalibrationCheck& c);
void calibration_json(std::ostream& os, const estimate::CalibrationCheck& c);

void unfitted_text(std::ostream& os, const estimate::UnfittedCheck& u);
void unfitted_json(std::ostream& os, const estimate::UnfittedCheck& u);

}  // namespace lumos::report
