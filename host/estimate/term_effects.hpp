// What each named term of the model-driven step adds to it (`lumos estimate --explain`): the step
// estimated again without the term, one term at a time (docs/design.md, "Named terms").
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"

namespace lumos::estimate {

struct TermEffect {
  std::string term;    // model::to_string(Term)
  std::string value;   // what the term is for this job, in a few words
  std::string source;  // where its figures come from in kernels_db
  bool applies = false;
  double step_without_us = 0;
  double added_us = 0;  // the step with it minus the step without it
};

// `step_us`: the request's own step time. Terms that do not apply to the job (FP8 terms of a
// BF16 job, userbuffers without tensor parallelism) are listed without being estimated.
std::vector<TermEffect> term_effects(const EstimateRequest& req, const cost::KernelsDb& db,
                                     double step_us);

}  // namespace lumos::estimate
