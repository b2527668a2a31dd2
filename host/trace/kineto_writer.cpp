#include "trace/kineto_writer.hpp"

#include <cmath>
#include <sstream>

#include "common/json_writer.hpp"

namespace lumos::trace {

void KinetoWriter::add(const std::string& cat, const std::string& name, int64_t pid, int64_t tid,
                       double ts_us, double dur_us,
                       std::vector<std::pair<std::string, ArgValue>> args) {
  events_.push_back({cat, name, pid, tid, ts_us, dur_us, std::move(args)});
}

void KinetoWriter::cpu_op(int64_t tid, const std::string& name, double ts, double dur,
                          std::vector<std::pair<std::string, ArgValue>> args) {
  add("cpu_op", name, kPid, tid, ts, dur, std::move(args));
}

void KinetoWriter::annotation(int64_t tid, const std::string& name, double ts, double dur) {
  add("user_annotation", name, kPid, tid, ts, dur);
}

int64_t KinetoWriter::runtime(int64_t tid, const std::string& name, double ts, double dur) {
  const int64_t corr = next_corr_++;
  add("cuda_runtime", name, kPid, tid, ts, dur, {{"correlation", corr}, {"External id", corr}});
  return corr;
}

int64_t KinetoWriter::launch(int64_t tid, const std::string& call, double call_ts, double call_dur,
                             const std::string& gpu_cat, const std::string& gpu_name,
                             int64_t device, int64_t stream, double gpu_ts, double gpu_dur,
                             std::vector<std::pair<std::string, ArgValue>> gpu_args) {
  const int64_t corr = runtime(tid, call, call_ts, call_dur);
  std::vector<std::pair<std::string, ArgValue>> args = {
      {"correlation", corr}, {"External id", corr}, {"device", device}, {"stream", stream}};
  for (auto& a : gpu_args) args.push_back(std::move(a));
  add(gpu_cat, gpu_name, device, stream, gpu_ts, gpu_dur, std::move(args));
  return corr;
}

void KinetoWriter::sync(const std::string& kind, int64_t corr, int64_t device, int64_t stream,
                        double ts, double dur, int64_t wait_on_stream,
                        int64_t wait_on_record_corr) {
  add("cuda_sync", kind, device, stream, ts, dur,
      {{"cuda_sync_kind", kind},
       {"correlation", corr},
       {"device", device},
       {"stream", stream},
       {"wait_on_stream", wait_on_stream},
       {"wait_on_cuda_event_record_corr_id", wait_on_record_corr}});
}

std::string KinetoWriter::json() const {
  std::ostringstream os;
  common::JsonWriter w(os, common::JsonWriter::Document::plain);
  w.begin_object();
  w.field("schemaVersion", 1);
  if (rank_ >= 0) {
    w.key("distributedInfo").begin_object();
    w.field("backend", "nccl").field("rank", rank_).field("world_size", world_);
    if (!traced_ranks_.empty()) {
      w.key("lumos_traced_ranks").begin_array();
      for (int r : traced_ranks_) w.value(r);
      w.end_array();
    }
    w.end_object();
  }
  if (base_ns_ >= 0) w.field("baseTimeNanoseconds", base_ns_);
  if (!device_name_.empty()) {
    w.key("deviceProperties").begin_array().begin_object();
    w.field("id", 0).field("name", device_name_);
    w.end_object().end_array();
  }
  w.key("traceEvents").begin_array();
  for (const Ev& e : events_) {
    w.begin_object();
    w.field("ph", "X").field("cat", e.cat).field("name", e.name);
    w.field("pid", e.pid).field("tid", e.tid);
    // Integer µs when whole (the older convention), float µs otherwise.
    auto time = [&](const char* key, double v, bool absolute) {
      const double t = absolute && base_ns_ < 0 ? v + static_cast<double>(epoch_us_) : v;
      if (std::floor(v) == v)
        w.field(key, static_cast<int64_t>(std::llround(t)));
      else
        w.field(key, t);
    };
    time("ts", e.ts, true);
    time("dur", e.dur, false);
    if (!e.args.empty()) {
      w.key("args").begin_object();
      for (const auto& [k, v] : e.args) {
        switch (v.type) {
          case ArgValue::Type::kInt:
            w.field(k, v.i);
            break;
          case ArgValue::Type::kString:
            w.field(k, v.s);
            break;
          case ArgValue::Type::kDims:
            w.key(k).begin_array();
            for (const auto& d : v.dims) {
              w.begin_array();
              for (int64_t x : d) w.value(x);
              w.end_array();
            }
            w.end_array();
            break;
          case ArgValue::Type::kStrings:
            w.key(k).begin_array();
            for (const auto& x : v.strings) w.value(x);
            w.end_array();
            break;
        }
      }
      w.end_object();
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  os << '\n';
  return os.str();
}

}  // namespace lumos::trace
