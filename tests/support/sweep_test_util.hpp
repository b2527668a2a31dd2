// `lumos estimate` of a sweep row's configuration: what the sweep tests hold every row to.
#pragma once

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::test {

inline estimate::Estimate estimate_of(const sweep::SweepSpec& spec, const sweep::SweepRow& row,
                                      const cost::KernelsDb& db = cost::embedded_db()) {
  estimate::EstimateRequest req;
  req.model = spec.model;
  req.cfg = row.variant.cfg;
  req.gpu = row.variant.gpu;
  req.topology = row.variant.topology;
  req.nic_gbps = row.variant.nic_gbps;
  req.gpus_per_node = row.variant.gpus_per_node;
  req.nvlink_gbps = row.variant.nvlink_gbps;
  return estimate::run_estimate(req, db).estimate;
}

}  // namespace lumos::test
