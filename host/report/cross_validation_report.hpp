// `lumos bench estimate --cross-validate`: the left-out error of every source of published runs
// beside its in-sample error, as a table or CSV; and kernels_db/calibration.json, the residuals
// estimates' ranges come from.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/cross_validation.hpp"

namespace lumos::report {

void cross_validation_text(std::ostream& os, const estimate::CrossValidation& cv,
                           const cost::ResidualsCoverage& coverage);
// One row per published run: its source, published, in-sample and left-out step times and errors.
void cross_validation_csv(std::ostream& os, const estimate::CrossValidation& cv);
// kernels_db/calibration.json. `generated`: the date and commit the table was made at.
void residuals_json(std::ostream& os, const std::vector<cost::CalibrationResidual>& residuals,
                    const cost::ResidualsCoverage& coverage);

}  // namespace lumos::report
