// A fleet of servers and the jobs to place on it (`lumos place`). A server type is a pool of
// identical servers; a job has options, one per way it can run (on which pool, reserving how
// many cores or GPUs, for how long), given by a jobs file, by a benchmark-score demand, or by the
// rows of a `lumos sweep` variants CSV over GPU types.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "carbon/embodied.hpp"

namespace lumos::carbon {

struct ServerPool {
  std::string name;
  std::string gpu;  // GPU type of its servers (a sweep CSV's `gpu`), "" for CPU servers
  int64_t count = 1;
  double resources = 1;          // per server: the cores (threads) or GPUs that jobs reserve
  double score = 0;              // per server: a benchmark score (PassMark, ...); 0: not given
  double idle_w = 0, max_w = 0;  // per server, at 0% and 100% load (linear between)
  double embodied_g = 0;         // per server
  double age_y = 0, lifetime_y = 5;
};

struct Fleet {
  std::string name;
  std::vector<ServerPool> pools;
  double grid_g_per_kwh = -1;  // the site's grid intensity; < 0: not given
  double pue = 1;
  // Jobs given as a score reserve whole cores (the paper's two-server example: 1 core of S_A or
  // 2 of S_B) or a fraction of a server's score ("no resources are stranded", its case study).
  bool whole_resources = false;
  size_t pool(const std::string& name) const;  // throws InputError for an unknown name
};

struct JobOption {
  size_t pool = 0;
  double resources = 0;  // reserved on that pool
  double hours = 0;
  std::string label;  // what the option is (a sweep row's layout), for reports
};

struct Job {
  std::string name;
  std::vector<JobOption> options;
};

// A fleet file's size: server types, and servers over all types (far beyond any datacenter;
// each type's count is at most 10^6).
constexpr double kMaxServerTypes = 10000;
constexpr double kMaxFleetServers = 1e7;

// Reads a fleet file (TOML; README "Carbon and placement" gives the format). Throws InputError
// naming the file, line and field for a missing or bad value: negative power or embodied carbon,
// a count or resources below 1, a value outside its common/physical_ranges.hpp range, a fleet
// above the caps above.
Fleet load_fleet(const std::string& path);

// Reads a jobs file (TOML [[job]] tables: `score` and `hours`, or per-pool options).
std::vector<Job> load_jobs(const std::string& path, const Fleet& fleet);

// A job that needs `score` of benchmark throughput for `hours`: on each pool with a score, the
// share of a server that gives it (whole resources when the fleet says so).
Job job_from_score(const Fleet& fleet, const std::string& name, double score, double hours);

// One job from a `lumos sweep` variants CSV: every feasible row whose GPU has a pool is an option
// (GPUs reserved = the row's `gpus`, hours = its `time_to_train_h`). Throws InputError when no
// row can run on the fleet.
Job job_from_sweep_csv(const std::string& path, const Fleet& fleet, const std::string& name);

}  // namespace lumos::carbon
