// `mpirun -n N lumos sweep ...`: the ranks of an MPI launch, when lumos is built with MPI (Open MPI
// from Debian, optional) and started by mpirun; otherwise one rank and nothing else. MPI is
// initialised only under a launcher, so every other use of lumos stays free of it.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace lumos::cli {

// Thrown by gather() on a rank whose peer failed (the peer reports the error).
struct PeerFailed {};

class MpiWorld {
 public:
  MpiWorld();  // initialises MPI when built with it and launched by mpirun (or srun, PMI)
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank's text, in rank order, on rank 0 (empty elsewhere). Every rank agrees first that
  // none has failed: a rank that failed before calling it calls fail() instead, and the others
  // then throw PeerFailed rather than wait for it.
  std::vector<std::string> gather(const std::string& mine) const;
  // Whether this rank got through gather() (after it no rank waits for another).
  bool gathered() const { return gathered_; }
  // This rank failed before gather(): returns the lowest failing rank, the one that reports.
  int fail() const { return agree(true); }

 private:
  int agree(bool failed) const;  // the lowest failing rank, or -1
  int rank_ = 0, size_ = 1;
  bool initialised_ = false;
  mutable bool gathered_ = false;
};

// Runs `command` on every rank of `world`. Ranks other than 0 print nothing: their errors on the
// same inputs are rank 0's, and rank 0 writes the outputs. Under MPI an error on one rank alone (a
// file only it cannot read) would leave the others waiting in the gather, so the ranks agree on
// who failed: the lowest failing rank prints its one line and every rank returns 1. Alone, errors
// go up to the caller as everywhere else.
int run_on_ranks(const MpiWorld& world, const std::function<int()>& command);

// Whether this build can run under mpirun (for `lumos info` and the tests).
bool built_with_mpi();

}  // namespace lumos::cli
