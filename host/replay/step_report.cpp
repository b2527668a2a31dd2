#include "replay/step_report.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace lumos::replay {

using graph::Graph;
using graph::NodeClass;
using graph::NodeId;

std::vector<StepTime> step_times(const Graph& g, const ReplayResult& r) {
  std::vector<double> end(g.steps.size(), 0.0);
  std::vector<bool> any(g.steps.size(), false);
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    const int32_t s = g.step[v];
    if (s < 0) continue;
    end[s] = any[s] ? std::max(end[s], r.finish_us[v]) : r.finish_us[v];
    any[s] = true;
  }
  std::vector<StepTime> out;
  for (size_t k = 0; k < g.steps.size(); ++k) {
    StepTime st;
    st.name = g.steps[k].name;
    st.rank = g.steps[k].rank;
    st.measured_us = g.steps[k].measured_us;
    st.replayed_us = any[k] ? end[k] - r.start_us[g.steps[k].marker] : 0.0;
    st.error_pct =
        st.measured_us > 0 ? (st.replayed_us - st.measured_us) / st.measured_us * 100.0 : 0.0;
    out.push_back(st);
  }
  return out;
}

namespace {

// Union of intervals clipped to [lo, hi), as sorted disjoint pairs.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> v, double lo,
                                              double hi) {
  for (auto& iv : v) {
    iv.first = std::max(iv.first, lo);
    iv.second = std::min(iv.second, hi);
  }
  v.erase(std::remove_if(v.begin(), v.end(), [](auto& iv) { return iv.second <= iv.first; }),
          v.end());
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> out;
  for (auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

double length(const std::vector<std::pair<double, double>>& v) {
  double s = 0;
  for (auto& iv : v) s += iv.second - iv.first;
  return s;
}

double intersection(const std::vector<std::pair<double, double>>& a,
                    const std::vector<std::pair<double, double>>& b) {
  double s = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return s;
}

}  // namespace

Breakdown& Breakdown::operator+=(const Breakdown& b) {
  window_us += b.window_us;
  exposed_compute_us += b.exposed_compute_us;
  overlapped_us += b.overlapped_us;
  exposed_comm_us += b.exposed_comm_us;
  bubble_us += b.bubble_us;
  other_us += b.other_us;
  return *this;
}

Breakdown Breakdown::scaled(double k) const {
  Breakdown b;
  b.window_us = k * window_us;
  b.exposed_compute_us = k * exposed_compute_us;
  b.overlapped_us = k * overlapped_us;
  b.exposed_comm_us = k * exposed_comm_us;
  b.bubble_us = k * bubble_us;
  b.other_us = k * other_us;
  return b;
}

Breakdown breakdown(const Graph& g, const std::vector<double>& start_us,
                    const std::vector<double>& finish_us, int32_t step, double begin_us,
                    double end_us) {
  std::vector<NodeId> nodes;
  for (NodeId v = 1; v < g.num_nodes(); ++v)
    if (step < 0 || g.step[v] == step) nodes.push_back(v);
  return breakdown(g, start_us, finish_us, nodes, begin_us, end_us);
}

Breakdown breakdown(const Graph& g, const std::vector<double>& start_us,
                    const std::vector<double>& finish_us, const std::vector<NodeId>& nodes,
                    double begin_us, double end_us) {
  std::vector<std::pair<double, double>> comp, comm;
  for (NodeId v : nodes) {
    const NodeClass c = g.cls[v];
    if (c == NodeClass::kComm)
      comm.push_back({start_us[v], finish_us[v]});
    else if (c == NodeClass::kCompute || c == NodeClass::kMemory)
      comp.push_back({start_us[v], finish_us[v]});
  }
  const auto mc = merged(std::move(comp), begin_us, end_us);
  const auto mm = merged(std::move(comm), begin_us, end_us);
  Breakdown b;
  b.window_us = std::max(0.0, end_us - begin_us);
  const double lc = length(mc), lm = length(mm), both = intersection(mc, mm);
  b.overlapped_us = both;
  b.exposed_compute_us = lc - both;
  b.exposed_comm_us = lm - both;
  b.other_us = std::max(0.0, b.window_us - (lc + lm - both));
  return b;
}

std::vector<StreamBusy> stream_busy(const Graph& g, const ReplayResult& r) {
  std::vector<StreamBusy> out;
  std::vector<int> slot(g.resources.size(), -1);
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    const uint32_t res = g.resource[v];
    if (res == graph::kNoResource || g.resources[res].kind != graph::ResourceKind::kStream)
      continue;
    if (slot[res] < 0) {
      slot[res] = static_cast<int>(out.size());
      out.push_back({g.resources[res].a, g.resources[res].b, 0.0, 0});
    }
    out[slot[res]].busy_us += r.finish_us[v] - r.start_us[v];
    ++out[slot[res]].ops;
  }
  std::sort(out.begin(), out.end(), [](const StreamBusy& a, const StreamBusy& b) {
    return std::tie(a.device, a.stream) < std::tie(b.device, b.stream);
  });
  return out;
}

}  // namespace lumos::replay
