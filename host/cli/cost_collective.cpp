#include "cli/cost_collective.hpp"

#include <cxxopts.hpp>

#include <optional>
#include <string>

#include "cli/cost_options.hpp"
#include "common/error.hpp"
#include "cost/collective_topology.hpp"
#include "cost/size_units.hpp"
#include "report/cost_report.hpp"

namespace lumos::cli {
namespace {

// 2^20 ranks: the most any layout of `lumos estimate` spans.
constexpr int64_t kMaxCollectiveRanks = int64_t{1} << 20;
constexpr CountOption kRanks{"ranks", 1, kMaxCollectiveRanks},
    kRanksPerNode{"ranks-per-node", 1, kMaxCollectiveRanks}, kNicsPerGpu{"nics-per-gpu", 1, 1024};

}  // namespace

int cost_collective(int argc, char** argv) {
  using namespace lumos::cost;
  CostOptions c("lumos cost collective",
                "Time of an NCCL collective with NCCL's algorithm and protocol model.");
  c.o.add_options()("op",
                    "allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv",
                    arg<std::string>("allreduce"))(
      "bytes", "message size (nccl-tests size: 4096, 64MiB, 1GiB, ...)", arg<std::string>())(
      kRanks.name, count_help("ranks in the group", kRanks), count_value())(
      kRanksPerNode.name, count_help("ranks per node", kRanksPerNode), count_value("8"))(
      "algo", "auto, ring, tree, nvls or nvlstree", arg<std::string>("auto"))(
      "topology", "a topology of kernels_db/nccl.json (default: the GPU's)", arg<std::string>())(
      "nic-bandwidth", "override: NIC line rate with its unit (400Gbps, 400Gb/s, 50GB/s)",
      arg<std::string>())("nic-gbps", "deprecated: NIC line rate in gigabits per second",
                          decimal_value())(
      kNicsPerGpu.name, count_help("override: NICs per GPU", kNicsPerGpu), count_value())(
      "nic-efficiency", "override: achieved fraction of NIC line rate", decimal_value());
  if (!c.parse(argc, argv,
               {"lumos cost collective --op allreduce --bytes 1GiB --ranks 64",
                "lumos cost collective --op alltoall --bytes 64MiB --ranks 16 "
                "--nic-bandwidth 400Gbps"}))
    return 0;
  const GpuSpec& gpu = c.gpu();
  LUMOS_EXPECT(!(c.has("nic-bandwidth") && c.has("nic-gbps")),
               "lumos cost collective: give --nic-bandwidth or --nic-gbps, not both");
  std::optional<double> nic_gbytes;
  if (c.has("nic-bandwidth"))
    nic_gbytes = parse_bandwidth_gbytes_per_s(c.str("nic-bandwidth"), "--nic-bandwidth");
  if (c.has("nic-gbps"))  // gigabits, as the name says and NICs are sold
    nic_gbytes = decimal_of(c.a, "nic-gbps", "lumos cost") / 8;
  std::optional<int> nics;
  if (c.has("nics-per-gpu")) nics = c.positive<int>(kNicsPerGpu);
  const Topology topo =
      collective_topology(*c.db, gpu, c.opt<std::string>("topology"),
                          {nic_gbytes, nics, decimal_if(c.a, "nic-efficiency", "lumos cost")});
  LUMOS_EXPECT(c.has("bytes"), "lumos cost collective: missing --bytes");
  const CollectiveQuery q{parse_collective(c.str("op")), parse_bytes(c.str("bytes"), "--bytes"),
                          c.positive<int>(kRanks), c.positive<int>(kRanksPerNode),
                          parse_coll_algo(c.str("algo"))};
  return c.render(report::collective_json, report::collective_text, gpu, topo, q,
                  collective_time(*c.db, gpu, topo, q));
}

}  // namespace lumos::cli
