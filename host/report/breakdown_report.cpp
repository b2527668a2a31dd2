#include "report/breakdown_report.hpp"

#include "common/format.hpp"

namespace lumos::report {

void breakdown_json(common::JsonWriter& w, const replay::Breakdown& b) {
  w.begin_object()
      .field("window_us", b.window_us)
      .field("exposed_compute_us", b.exposed_compute_us)
      .field("overlapped_us", b.overlapped_us)
      .field("exposed_comm_us", b.exposed_comm_us)
      .field("bubble_us", b.bubble_us)
      .field("other_us", b.other_us)
      .end_object();
}

void breakdown_line(std::ostream& os, const char* label, const replay::Breakdown& b) {
  auto pct = [&](double v) { return b.window_us > 0 ? v / b.window_us * 100.0 : 0.0; };
  os << strprintf(
      "%-10s exposed compute %10.1f us (%4.1f%%)  overlapped %10.1f us (%4.1f%%)  exposed comm "
      "%10.1f us (%4.1f%%)  other %10.1f us (%4.1f%%)\n",
      label, b.exposed_compute_us, pct(b.exposed_compute_us), b.overlapped_us, pct(b.overlapped_us),
      b.exposed_comm_us, pct(b.exposed_comm_us), b.other_us, pct(b.other_us));
}

}  // namespace lumos::report
