// Correlation indexes over the trace's events, and the lookups every later phase shares:
// resources by (kind, a, b) and the step a timestamp belongs to.
#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "graph/trace_builder.hpp"

namespace lumos::graph::detail {

using trace::Event;
using trace::EventKind;

// Runtime calls and cuda_sync records by correlation: launches, syncs and stream waits find
// their calls through them.
void Builder::index_events() {
  for (uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    if (e.kind == EventKind::kRuntime && e.correlation >= 0)
      runtime_event_.emplace(e.correlation, i);
    if (e.kind == EventKind::kSync) {
      has_sync_events_ = true;
      sync_event_.emplace(e.correlation, i);
    }
  }
  // A cuda_sync event names the runtime call it belongs to and, for event waits, the record call;
  // a correlation that matches no call means the trace is inconsistent.
  for (const Event& e : t_.events) {
    if (e.kind != EventKind::kSync) continue;
    auto dangling = [&](const char* field, int64_t corr) {
      throw InputError(
          t_.path + ": event #" + std::to_string(e.index) + " (" + std::string(t_.name_of(e)) +
          "): field '" + field +
          "': expected the correlation of a runtime call in the trace, got dangling id " +
          std::to_string(corr));
    };
    if (!runtime_event_.count(e.correlation)) dangling("args.correlation", e.correlation);
    if (e.wait_on_record_corr >= 0 && !runtime_event_.count(e.wait_on_record_corr))
      dangling("args.wait_on_cuda_event_record_corr_id", e.wait_on_record_corr);
  }
}

uint32_t Builder::resource_id(uint8_t kind, int64_t a, int64_t b) {
  ResKey k{kind, a, b};
  auto it = res_ids_.find(k);
  if (it != res_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(resources_.size());
  Resource r;
  r.kind = static_cast<ResourceKind>(kind);
  r.rank = std::max(0, t_.rank);
  r.a = a;
  r.b = b;
  resources_.push_back(r);
  res_nodes_.emplace_back();
  launch_order_.emplace_back();
  res_ids_.emplace(k, id);
  return id;
}

int32_t Builder::step_of(int64_t ts) const {
  // Steps are sorted; the window of step k is [begin_k, end_k).
  auto it = std::upper_bound(steps_.begin(), steps_.end(), ts,
                             [](int64_t v, const TraceStep& s) { return v < s.begin_ns; });
  if (it == steps_.begin()) return -1;
  const auto k = static_cast<int32_t>(it - steps_.begin() - 1);
  if (ts >= steps_[k].end_ns) return -1;
  return opt_.window_step >= 0 ? 0 : k;
}

}  // namespace lumos::graph::detail
