#include "report/cross_validation_report.hpp"

#include "common/format.hpp"
#include "common/json_writer.hpp"

namespace lumos::report {

namespace {

std::string constants_text(const std::vector<estimate::ConstantValue>& values) {
  std::string out;
  for (const auto& v : values)
    out += (out.empty() ? "" : ", ") +
           (v.fit_rows > 0 ? strprintf("%s %.3f (%d rows)", v.stack.c_str(), v.value, v.fit_rows)
                           : v.stack + " 1 (no rows)");
  return out;
}

}  // namespace

void cross_validation_text(std::ostream& os, const estimate::CrossValidation& cv,
                           const cost::ResidualsCoverage& coverage) {
  os << "cross-validation: leave one source out (every fitted constant refitted on the other\n"
        "  sources, the left-out source's runs predicted); step time, lumos vs published\n"
        "  (negative: lumos too fast)\n";
  os << strprintf("  %-58s %4s  %-17s %-17s\n", "source", "rows", "left out |e| sgn",
                  "in sample |e| sgn");
  for (const estimate::SourceError& s : cv.sources)
    os << strprintf("  %-58s %4d  %6.1f%% %+7.1f%%  %6.1f%% %+7.1f%%\n", s.source.c_str(), s.rows,
                    s.left_out_mean_abs_pct, s.left_out_signed_pct, s.in_sample_mean_abs_pct,
                    s.in_sample_signed_pct);
  os << strprintf("  %-58s %4zu  %6.1f%% %+7.1f%%  %6.1f%% %+7.1f%%\n", "all runs", cv.runs.size(),
                  cv.left_out_mean_abs_pct, cv.left_out_signed_pct, cv.in_sample_mean_abs_pct,
                  cv.in_sample_signed_pct);
  os << "fitted on every source: " << constants_text(cv.in_sample) << '\n';
  os << "refitted without each source:\n";
  for (const estimate::SourceError& s : cv.sources)
    os << "  " << s.source << ": " << constants_text(s.constants) << '\n';
  if (coverage.rows > 0)
    os << strprintf(
        "ranges: %d of %d runs (%.0f%%) have their published step time inside the range set by\n"
        "  the left-out errors of the other sources' runs\n",
        coverage.inside, coverage.rows, 100.0 * coverage.inside / coverage.rows);
}

void cross_validation_csv(std::ostream& os, const estimate::CrossValidation& cv) {
  os << "label,source,gpu,stack,tier,published_step_s,in_sample_step_s,left_out_step_s,"
        "in_sample_error_pct,left_out_error_pct\n";
  for (const estimate::CrossValidatedRun& c : cv.runs) {
    // Labels and sources hold commas: a cell that would split is quoted.
    auto cell = [](const std::string& s) {
      return s.find_first_of(",\"") == std::string::npos ? s : "\"" + s + "\"";
    };
    os << cell(c.run->label) << ',' << cell(c.run->source) << ',' << c.run->request.gpu << ','
       << c.run->request.cfg.stack << ',' << c.run->tier << ','
       << strprintf("%.6g,%.6g,%.6g,%.3f,%.3f\n", c.published_step_s, c.in_sample_step_s,
                    c.left_out_step_s, c.in_sample_error_pct, c.left_out_error_pct);
  }
}

void residuals_json(std::ostream& os, const std::vector<cost::CalibrationResidual>& residuals,
                    const cost::ResidualsCoverage& coverage) {
  // One run per line, so that a change to the model shows as a readable diff.
  os << "{\n  \"schema_version\": 1,\n  \"kind\": \"calibration_residuals\",\n"
     << "  \"description\": \"Written by `lumos bench estimate --write-residuals "
        "kernels_db/calibration.json` (scripts/update-residuals.sh); do not edit. error_pct: lumos "
        "step time against the published one (negative: lumos too fast) for every run of "
        "estimate/published_runs.cpp, whose sources it names, with kernels_db as it is. "
        "left_out_error_pct: the same with the fitted constants refitted without the run's source "
        "(leave-one-source-out cross-validation). An estimate's range comes from the left-out "
        "errors of the runs of its GPU and stack nearest in GPU count and parameters; coverage: "
        "how "
        "many runs' published step times such a range, set without their source, contained.\",\n";
  os << "  \"coverage\": ";
  {
    common::JsonWriter w(os, common::JsonWriter::Document::plain);
    w.begin_object()
        .field("rows", coverage.rows)
        .field("inside", coverage.inside)
        .field("generated", coverage.generated)
        .end_object();
  }
  os << ",\n  \"runs\": [\n";
  for (size_t i = 0; i < residuals.size(); ++i) {
    const cost::CalibrationResidual& r = residuals[i];
    os << "    ";
    common::JsonWriter w(os, common::JsonWriter::Document::plain);  // a row of the document above
    w.begin_object()
        .field("label", r.label)
        .field("source", r.source)
        .field("gpu", r.gpu)
        .field("stack", r.stack)
        .field("gpus", r.gpus)
        .field("params", r.params)
        .field("error_pct", r.error_pct)
        .field("left_out_error_pct", r.left_out_error_pct)
        .end_object();
    os << (i + 1 < residuals.size() ? ",\n" : "\n");
  }
  os << "  ]\n}\n";
}

}  // namespace lumos::report
