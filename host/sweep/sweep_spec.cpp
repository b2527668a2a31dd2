#include "sweep/sweep_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/count_text.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/physical_ranges.hpp"
#include "cost/size_units.hpp"

namespace lumos::sweep {

namespace {

constexpr size_t kMaxAxisValues = 4096;

int64_t parse_positive(const std::string& s, const std::string& what) {
  if (s.empty() || s.size() > 12)
    throw InputError(what + ": '" + s + "' is not a positive integer");
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw InputError(what + ": '" + s + "' is not a positive integer");
  const int64_t v = std::stoll(s);
  if (v < 1) throw InputError(what + ": '" + s + "' is not a positive integer");
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t end = text.find(sep, at);
    out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return out;
    at = end + 1;
  }
}

}  // namespace

std::vector<int64_t> parse_int_axis(const std::string& text, const std::string& what) {
  LUMOS_EXPECT(!text.empty(), what + ": the axis is empty");
  std::vector<int64_t> out;
  for (const std::string& item : split(text, ',')) {
    const size_t dots = item.find("..");
    const size_t colon = item.find(':');
    if (dots != std::string::npos) {  // a doubling range
      const int64_t lo = parse_positive(item.substr(0, dots), what);
      const int64_t hi = parse_positive(item.substr(dots + 2), what);
      LUMOS_EXPECT(lo <= hi, what + ": the range '" + item + "' is empty");
      for (int64_t v = lo; v <= hi; v *= 2) out.push_back(v);
    } else if (colon != std::string::npos) {  // lo:hi:step
      const std::vector<std::string> p = split(item, ':');
      LUMOS_EXPECT(p.size() == 3, what + ": '" + item + "': expected LO:HI:STEP");
      const int64_t lo = parse_positive(p[0], what), hi = parse_positive(p[1], what),
                    step = parse_positive(p[2], what);
      LUMOS_EXPECT(lo <= hi, what + ": the range '" + item + "' is empty");
      LUMOS_EXPECT((hi - lo) / step < static_cast<int64_t>(kMaxAxisValues),
                   what + ": the range '" + item + "' has more than 4096 values");
      for (int64_t v = lo; v <= hi; v += step) out.push_back(v);
    } else {
      out.push_back(parse_positive(item, what));
    }
    LUMOS_EXPECT(out.size() <= kMaxAxisValues, what + ": more than 4096 values");
  }
  return out;
}

std::vector<double> parse_bandwidth_axis(const std::string& text, const std::string& what) {
  std::vector<double> out;
  for (const std::string& item : parse_name_axis(text, what))
    out.push_back(cost::parse_bandwidth_gbytes_per_s(item, what));
  return out;
}

std::vector<std::string> parse_name_axis(const std::string& text, const std::string& what) {
  LUMOS_EXPECT(!text.empty(), what + ": the axis is empty");
  return common::parse_name_list(text, what);
}

uint64_t parse_count(const std::string& s, const std::string& what) {
  LUMOS_EXPECT(!s.empty() && s.size() <= 15 &&
                   std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }),
               what + ": '" + s + "' is not a non-negative integer");
  return std::stoull(s);
}

namespace {

// What expand() and count_configurations() need of the axes before either loops over them:
// none empty, each value in range (degrees beyond any layout's would overflow their products).
void check_axes(const SweepSpec& s) {
  for (const auto* axis : {&s.tp, &s.cp, &s.pp, &s.interleave, &s.mbs, &s.gbs})
    LUMOS_EXPECT(!axis->empty(), "sweep: an axis is empty");
  LUMOS_EXPECT(!s.recompute.empty() && !s.sequence_parallel.empty() &&
                   !s.distributed_optimizer.empty() && !s.fsdp.empty() && !s.dtypes.empty() &&
                   !s.stacks.empty() && !s.gpus.empty() && !s.topologies.empty() &&
                   !s.nic_gbps.empty() && !s.gpus_per_node.empty() && !s.nvlink_gbps.empty() &&
                   !s.regions.empty() && !s.pue.empty() && (!s.total_gpus.empty() || !s.dp.empty()),
               "sweep: an axis is empty");
  for (int64_t gpn : s.gpus_per_node)
    LUMOS_EXPECT(gpn >= 0 && gpn <= 1024,
                 "sweep: GPUs per node " + std::to_string(gpn) + ": expected 1 to 1024");
  for (double bw : s.nvlink_gbps)
    LUMOS_EXPECT(bw >= 0 && std::isfinite(bw), "sweep: an NVLink bandwidth is negative");
  for (double p : s.pue)
    if (p != 0) expect_in_range(kPueRange, p, "sweep: --pue");
  std::array<bool, replay::kNumNodeClasses> named{};
  for (const whatif::SpeedAxis& axis : s.speed) {
    LUMOS_EXPECT(!axis.factors.empty(), "sweep: the speed axis of " + axis.name + " is empty");
    LUMOS_EXPECT(!named[static_cast<size_t>(axis.cls)],
                 "sweep: --speed names " + axis.name + " twice; give its factors as one list");
    named[static_cast<size_t>(axis.cls)] = true;
  }
  for (const auto* axis : {&s.tp, &s.cp, &s.pp, &s.dp, &s.interleave})
    for (int64_t v : *axis)
      LUMOS_EXPECT(v <= (int64_t{1} << 16),
                   "sweep: a parallel degree of " + std::to_string(v) + " (at most 65536)");
  for (const int64_t total : s.total_gpus)
    LUMOS_EXPECT(total <= (int64_t{1} << 20),
                 "sweep: --gpus " + std::to_string(total) + " (at most 1048576)");
}

uint64_t saturating_product(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

}  // namespace

uint64_t count_configurations(const SweepSpec& s, uint64_t stop_above) {
  check_axes(s);
  // Every axis but the layout degrees multiplies each layout's configurations.
  uint64_t per_layout = 1;
  for (size_t n :
       {s.interleave.size(), s.mbs.size(), s.gbs.size(), s.recompute.size(),
        s.sequence_parallel.size(), s.fsdp.size(), s.distributed_optimizer.size(), s.dtypes.size(),
        s.stacks.size(), s.gpus.size(), s.topologies.size(), s.gpus_per_node.size(),
        s.nic_gbps.size(), s.nvlink_gbps.size(), s.regions.size(), s.pue.size()})
    per_layout = saturating_product(per_layout, n);
  for (const whatif::SpeedAxis& axis : s.speed)
    per_layout = saturating_product(per_layout, axis.factors.size());
  if (s.total_gpus.empty()) {
    uint64_t layouts = 1;
    for (size_t n : {s.tp.size(), s.cp.size(), s.pp.size(), s.dp.size()})
      layouts = saturating_product(layouts, n);
    return saturating_product(layouts, per_layout);
  }
  // With GPU totals only the layouts whose degrees divide a total count, as expand() leaves the
  // others out; the same short loops, stopped once the count passes the limit.
  uint64_t n = 0;
  for (int64_t total : s.total_gpus)
    for (int64_t tp : s.tp) {
      if (total % tp != 0) continue;
      for (int64_t cp : s.cp) {
        if (total % (tp * cp) != 0) continue;
        for (int64_t pp : s.pp) {
          if (total % (tp * cp * pp) != 0) continue;
          n = per_layout > UINT64_MAX - n ? UINT64_MAX : n + per_layout;
          if (n > stop_above) return n;
        }
      }
    }
  return n;
}

std::vector<SweepVariant> expand(const SweepSpec& s, uint64_t limit) {
  // Counted before anything is expanded: a sweep above the cap is refused at once rather than
  // after minutes of allocation (docs/design.md, caps before work).
  const uint64_t count = count_configurations(s, limit);
  const std::string how_many = count == UINT64_MAX    ? "more than 10^19"
                               : s.total_gpus.empty() ? std::to_string(count)
                                                      : "more than " + std::to_string(limit);
  LUMOS_EXPECT(count <= limit, "sweep: " + how_many + " configurations; at most " +
                                   std::to_string(limit) + " are expanded (narrow the axes)");
  // Every combination of the speed axes (one of all ones without axes).
  struct Speed {
    std::array<float, replay::kNumNodeClasses> factor{1, 1, 1, 1, 1};
    std::string label = "1";
  };
  std::vector<Speed> speeds(1);
  for (const whatif::SpeedAxis& axis : s.speed) {
    std::vector<Speed> next;
    for (const Speed& sp : speeds)
      for (float f : axis.factors) {
        Speed x = sp;
        x.factor[static_cast<size_t>(axis.cls)] = f;
        const std::string part = axis.name + "=" + strprintf("%g", f);
        x.label = sp.label == "1" ? part : sp.label + ";" + part;
        next.push_back(x);
      }
    speeds = std::move(next);
  }
  std::vector<SweepVariant> out;
  out.reserve(count);
  const std::vector<int64_t> totals = s.total_gpus.empty() ? std::vector<int64_t>{0} : s.total_gpus;
  auto add = [&](const model::ParallelConfig& c) {
    for (const std::string& stack : s.stacks)
      for (const std::string& gpu : s.gpus)
        for (const std::string& topo : s.topologies)
          for (int64_t gpn : s.gpus_per_node)
            for (double nic : s.nic_gbps)
              for (double nvlink : s.nvlink_gbps)
                for (const std::string& region : s.regions)
                  for (double pue : s.pue)
                    for (const Speed& speed : speeds) {
                      SweepVariant v;
                      v.index = out.size();
                      v.cfg = c;
                      v.cfg.stack = stack;
                      v.gpu = gpu;
                      v.topology = topo;
                      v.nic_gbps = nic;
                      v.gpus_per_node = static_cast<int>(gpn);
                      v.nvlink_gbps = nvlink;
                      v.region = region;
                      v.pue = pue;
                      v.speed = speed.factor;
                      v.speed_label = speed.label;
                      out.push_back(std::move(v));
                    }
  };
  for (int64_t total : totals)
    for (int64_t tp : s.tp) {
      if (total > 0 && total % tp != 0) continue;  // only divisors: the loops stay short
      for (int64_t cp : s.cp) {
        if (total > 0 && total % (tp * cp) != 0) continue;
        for (int64_t pp : s.pp) {
          if (total > 0 && total % (tp * cp * pp) != 0) continue;
          const std::vector<int64_t> one_dp = {total > 0 ? total / (tp * cp * pp) : 0};
          const std::vector<int64_t>& dps = total > 0 ? one_dp : s.dp;
          for (int64_t dp : dps)
            for (int64_t v : s.interleave)
              for (int64_t mbs : s.mbs)
                for (int64_t gbs : s.gbs)
                  for (model::Recompute rc : s.recompute)
                    for (int sp : s.sequence_parallel)
                      for (int fsdp : s.fsdp)
                        for (int dist : s.distributed_optimizer)
                          for (cost::Dtype dtype : s.dtypes) {
                            model::ParallelConfig c;
                            auto degree = [](int64_t x) {
                              return static_cast<int>(std::min<int64_t>(x, int64_t{1} << 30));
                            };
                            c.tp = degree(tp), c.cp = degree(cp), c.pp = degree(pp),
                            c.dp = degree(dp);
                            c.interleave = degree(v);
                            c.mbs = mbs, c.gbs = gbs, c.recompute = rc;
                            c.sequence_parallel = sp < 0 ? tp > 1 : sp == 1;
                            c.fsdp = fsdp == 1;
                            c.distributed_optimizer = dist < 0 ? dp * cp > 1 && !c.fsdp : dist == 1;
                            c.dtype = dtype;
                            add(c);
                          }
        }
      }
    }
  return out;
}

}  // namespace lumos::sweep
