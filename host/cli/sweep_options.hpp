// `lumos sweep`'s options, and the sweep they ask for: the spec (its axes from the command line,
// else the sweep file given with --spec, else the defaults), how it runs and what is shown.
#pragma once
#include <cxxopts.hpp>

#include <memory>
#include <string>

#include "cli/mpi_world.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/traced_sweep.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::cli {

void sweep_options(cxxopts::Options& o);

struct SweepRequest {
  sweep::SweepSpec spec;
  std::unique_ptr<estimate::TracedSweep> traced;  // --trace: its calibration, used while it runs
  sweep::SweepOptions opt;                        // under mpirun, this rank's shard
  std::string objectives;                         // as given, checked
  int top = 10;
  double min_headroom_fraction = 0;  // --min-headroom (report/sweep_headroom.hpp)
  bool json = false;                 // --json: the report as JSON
  // What defines the sweep (lumos's version, the model, every sweep option read, the tokens), as
  // text: its fingerprint names the sweep in a shard's CSVs (sweep/shard_header.hpp).
  std::string description;
};

// Throws InputError for a bad option or sweep file, an output that cannot be written, or --shard
// under mpirun.
SweepRequest sweep_request(const cxxopts::ParseResult& a, const cost::KernelsDb& db,
                           const MpiWorld& world);

}  // namespace lumos::cli
