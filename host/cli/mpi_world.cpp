#include "cli/mpi_world.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "common/error.hpp"

#ifdef LUMOS_HAS_MPI
#include <mpi.h>
#endif

namespace lumos::cli {

namespace {

// Set by Open MPI's mpirun, by PMIx and by Slurm's PMI: a launcher started this process.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

bool built_with_mpi() {
#ifdef LUMOS_HAS_MPI
  return true;
#else
  return false;
#endif
}

MpiWorld::MpiWorld() {
  if (!launched_by_mpi()) return;
#ifdef LUMOS_HAS_MPI
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    MPI_Init(nullptr, nullptr);
    initialised_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  LUMOS_EXPECT(!size || std::string(size) == "1",
               "lumos sweep: started by mpirun, but this lumos was built without MPI (install "
               "libopenmpi-dev and rebuild; or use --shard i/n)");
#endif
}

MpiWorld::~MpiWorld() {
#ifdef LUMOS_HAS_MPI
  if (initialised_) MPI_Finalize();
#endif
}

int MpiWorld::agree(bool failed) const {
  if (size_ == 1) return failed ? 0 : -1;
#ifdef LUMOS_HAS_MPI
  int mine = failed ? rank_ : size_, lowest = size_;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return lowest < size_ ? lowest : -1;
#else
  return failed ? rank_ : -1;
#endif
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) const {
  if (size_ == 1) return gathered_ = true, std::vector<std::string>{mine};
#ifdef LUMOS_HAS_MPI
  const long long n = static_cast<long long>(mine.size());
  LUMOS_EXPECT(n < (1LL << 30),
               "lumos sweep: a rank's rows exceed 1 GiB; split the sweep into more ranks");
  if (agree(false) >= 0) throw PeerFailed{};
  // Every rank learns every size, so a limit fails on all ranks alike (none left waiting).
  std::vector<long long> sizes(static_cast<size_t>(size_));
  MPI_Allgather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
  std::vector<int> counts(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
  long long total = 0;
  for (int r = 0; r < size_; ++r) {
    counts[static_cast<size_t>(r)] = static_cast<int>(sizes[static_cast<size_t>(r)]);
    offsets[static_cast<size_t>(r)] = static_cast<int>(total);
    total += sizes[static_cast<size_t>(r)];
  }
  LUMOS_EXPECT(total < (1LL << 31),
               "lumos sweep: the ranks' rows exceed 2 GiB; use --shard and lumos pareto --merge");
  std::string all(rank_ == 0 ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), static_cast<int>(n), MPI_CHAR, all.data(), counts.data(), offsets.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  gathered_ = true;
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                               static_cast<size_t>(counts[static_cast<size_t>(r)])));
  return out;
#else
  return {mine};
#endif
}

int run_on_ranks(const MpiWorld& world, const std::function<int()>& command) {
  const int own_stderr = world.rank() > 0 ? dup(STDERR_FILENO) : -1;
  if (world.rank() > 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
  }
  if (world.size() == 1) return command();
  try {
    return command();
  } catch (const PeerFailed&) {
    return 1;  // the rank that failed reports
  } catch (const std::exception& e) {
    // Before the gather every rank agrees who reports (the lowest failing rank); after it, only
    // rank 0 is still working and no rank waits.
    if (!world.gathered() && world.fail() != world.rank()) return 1;
    const std::string what = e.what();
    const std::string line = (what.rfind("lumos ", 0) == 0 ? "" : "lumos: ") + what + "\n";
    const int fd = world.rank() > 0 ? own_stderr : STDERR_FILENO;
    if (fd >= 0 && write(fd, line.data(), line.size()) < 0) return 1;
    return 1;
  }
}

}  // namespace lumos::cli
