#include "report/peer_waits_report.hpp"

#include "common/format.hpp"

namespace lumos::report {

namespace {

uint32_t count(const whatif::PeerWaits& w, whatif::TransferFrom f) {
  return w.by_source[static_cast<size_t>(f)];
}

}  // namespace

void peer_waits_text(std::ostream& os, const whatif::PeerWaits& w) {
  if (w.kernels.empty()) return;
  using whatif::TransferFrom;
  os << strprintf(
      "\ncommunication: %.1f us traced in %zu kernels, %.1f us (%.1f%%) of it waiting for peers "
      "(transfer from: rendezvous %u, shortest instance %u, cost model %u, no size %u)\n",
      w.traced_us, w.kernels.size(), w.wait_us, w.wait_fraction() * 100.0,
      count(w, TransferFrom::kRendezvous), count(w, TransferFrom::kShortest),
      count(w, TransferFrom::kModel), count(w, TransferFrom::kUnsized));
}

void peer_waits_json(common::JsonWriter& w, const whatif::PeerWaits& waits) {
  using whatif::TransferFrom;
  w.begin_object();
  w.field("kernels", static_cast<uint64_t>(waits.kernels.size()));
  w.field("traced_us", waits.traced_us).field("transfer_us", waits.transfer_us);
  w.field("wait_us", waits.wait_us).field("wait_fraction", waits.wait_fraction());
  w.key("transfer_from").begin_object();
  w.field("rendezvous", count(waits, TransferFrom::kRendezvous));
  w.field("shortest_instance", count(waits, TransferFrom::kShortest));
  w.field("cost_model", count(waits, TransferFrom::kModel));
  w.field("no_size", count(waits, TransferFrom::kUnsized));
  w.end_object();
  w.end_object();
}

}  // namespace lumos::report
