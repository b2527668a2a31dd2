// Writes Kineto-format trace JSON: the project's own small traces (the embedded demo, test
// fixtures) and, later, generated graphs. Output reads back through load_trace().
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lumos::trace {

struct ArgValue {
  enum class Type { kInt, kString, kDims, kStrings } type = Type::kInt;
  int64_t i = 0;
  std::string s;
  std::vector<std::vector<int64_t>> dims;                            // "Input Dims" of an operator
  std::vector<std::string> strings;                                  // "Input type" of an operator
  ArgValue(int64_t v) : type(Type::kInt), i(v) {}                    // NOLINT: implicit by design
  ArgValue(int v) : type(Type::kInt), i(v) {}                        // NOLINT
  ArgValue(const char* v) : type(Type::kString), s(v) {}             // NOLINT
  ArgValue(std::string v) : type(Type::kString), s(std::move(v)) {}  // NOLINT
  ArgValue(std::vector<std::vector<int64_t>> v)                      // NOLINT
      : type(Type::kDims), dims(std::move(v)) {}
  ArgValue(std::vector<std::string> v) : type(Type::kStrings), strings(std::move(v)) {}  // NOLINT
};

class KinetoWriter {
 public:
  static constexpr int64_t kPid = 1000;  // CPU process id of written traces

  // Times are µs relative to the trace start; written as integer absolute µs when whole, else
  // with baseTimeNanoseconds (set_base_time_ns) as float µs.
  void add(const std::string& cat, const std::string& name, int64_t pid, int64_t tid, double ts_us,
           double dur_us, std::vector<std::pair<std::string, ArgValue>> args = {});

  void cpu_op(int64_t tid, const std::string& name, double ts, double dur,
              std::vector<std::pair<std::string, ArgValue>> args = {});
  void annotation(int64_t tid, const std::string& name, double ts, double dur);
  // A launch call on a CPU thread and the GPU op it enqueues (correlation allocated here).
  // Returns the correlation id.
  // `gpu_args` are added to the GPU op's args (NCCL arguments of collective kernels).
  int64_t launch(int64_t tid, const std::string& call, double call_ts, double call_dur,
                 const std::string& gpu_cat, const std::string& gpu_name, int64_t device,
                 int64_t stream, double gpu_ts, double gpu_dur,
                 std::vector<std::pair<std::string, ArgValue>> gpu_args = {});
  int64_t runtime(int64_t tid, const std::string& name, double ts, double dur);
  // cuda_sync event for the runtime call with correlation corr.
  void sync(const std::string& kind, int64_t corr, int64_t device, int64_t stream, double ts,
            double dur, int64_t wait_on_stream = -1, int64_t wait_on_record_corr = -1);

  void set_rank(int rank, int world_size) { rank_ = rank, world_ = world_size; }
  // Declares that the job's traces are these ranks only (distributedInfo.lumos_traced_ranks):
  // the other ranks of the world repeat them, so a folder of these is complete.
  void set_traced_ranks(std::vector<int> ranks) { traced_ranks_ = std::move(ranks); }
  void set_base_time_ns(int64_t b) { base_ns_ = b; }
  void set_device_name(std::string n) { device_name_ = std::move(n); }
  void set_epoch_us(int64_t e) { epoch_us_ = e; }
  std::string json() const;

 private:
  struct Ev {
    std::string cat, name;
    int64_t pid, tid;
    double ts, dur;
    std::vector<std::pair<std::string, ArgValue>> args;
  };
  std::vector<Ev> events_;
  int64_t next_corr_ = 1;
  int rank_ = -1, world_ = -1;
  std::vector<int> traced_ranks_;
  int64_t base_ns_ = -1;
  std::string device_name_;
  int64_t epoch_us_ = 1700000000000000;  // absolute µs of time 0 when there is no base time
};

}  // namespace lumos::trace
