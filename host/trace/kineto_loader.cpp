#include "trace/kineto_loader.hpp"

#include <simdjson.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "common/huge_pages.hpp"
#include "trace/runtime_names.hpp"
#include "trace/trace_cut.hpp"

namespace lumos::trace {
namespace {

using simdjson::ondemand::json_type;
using simdjson::ondemand::object;
using simdjson::ondemand::value;

// Trace times (ts, dur, ts + dur) are at most 2^62 ns, written in microseconds: year 2116 for
// times since the epoch, and twice that still fits int64 nanoseconds.
constexpr int64_t kMaxTraceUs = (int64_t{1} << 62) / 1000;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Args that the graph needs; everything else is skipped unparsed.
struct Args {
  int64_t correlation = -1, external_id = -1, stream = -1, device = -1;
  int64_t wait_on_stream = -1, wait_on_record_corr = -1, bytes = -1;
  std::string_view sync_kind;
  std::string_view collective_name, dtype, pg_name, pg_desc;
  bool has_dims = false;  // the inputs' shapes are in the loader's Shapes
  int64_t in_nelems = -1, out_nelems = -1, group_size = -1, seq = -1;
};

// One event's "Input Dims" and "Input type", flat: inputs i's dims are dims[ends[i - 1], ends[i]).
// The loader keeps one and clears it for each event, so that reading shapes allocates nothing
// once it has grown to the largest event's.
struct Shapes {
  std::vector<int64_t> dims;
  std::vector<uint32_t> ends;
  std::vector<std::string_view> types;
  void clear() {
    dims.clear();
    ends.clear();
    types.clear();
  }
};

// One event's fields as read, before they are checked; the strings point into the JSON buffer.
struct RawEvent {
  std::string_view ph, cat, name;
  bool has_ts = false, has_dur = false, has_pid = false, has_tid = false, has_name = false;
  int64_t pid = 0, tid = 0;
  TimeNs ts = 0, dur = 0;
  Args args;
  bool have_args = false;
  bool pid_is_string = false, tid_is_string = false;  // ids that id_of gave a string
};

// Builds the table; keeps interning state and the current event for messages.
class Loader {
 public:
  // What the text is: a whole trace; the first part of one, whose traceEvents were cut short (its
  // closing brackets written in by the caller) and whose size sizes the table for the whole; or a
  // later part, the rest of traceEvents as an array of its own (docs/design.md, "Reading traces").
  enum class Part { kWhole, kHead, kEvents };

  Loader(const char* json, size_t size, std::string label, Part part = Part::kWhole,
         size_t whole_size = 0)
      : json_(json),
        size_(size),
        label_(std::move(label)),
        part_(part),
        whole_size_(whole_size ? whole_size : size) {}

  EventTable run();  // parse_document of the whole text, then finish

  // Parses one JSON document of [text, text + n) (an object with traceEvents or an array of
  // events), adding to the table; byte positions in messages count from the loader's `json`.
  // With no `parser`, the calling thread's own.
  void parse_document(const char* text, size_t n, simdjson::ondemand::parser* parser = nullptr);
  // The rest of a head's top-level object: `text` is `{` and the keys after traceEvents. Another
  // traceEvents there is an InputError, as a part cannot say where its events go.
  void parse_tail(const char* text, size_t n);
  // The token just after the last traceEvents array parsed, or nullptr.
  const char* events_end() const { return events_end_; }
  // Appends a later part's events (in file order, as if this loader had read them itself): names,
  // string ids, collectives, shapes and event numbers renumbered as one loader would have.
  void absorb(Loader&& later);
  // The checks on the whole trace (traceEvents present, some event kept), then the table.
  EventTable finish();
  // The size of the whole text, for a loader given it a piece at a time.
  void set_text_bytes(size_t n) { table_.json_bytes = n; }

 private:
  [[noreturn]] void fail_event(std::string_view field, std::string_view expected) const;
  [[noreturn]] void fail_json(simdjson::error_code code) const;
  // A loader given pieces has no text of its own (json_ null): its messages are not shown.
  size_t offset_of(const char* p) const { return p && json_ ? static_cast<size_t>(p - json_) : 0; }
  void parse_event(simdjson::ondemand::object obj);
  void read_ts(simdjson::ondemand::value v, RawEvent* r);
  void read_dur(simdjson::ondemand::value v, RawEvent* r);
  void read_args(simdjson::ondemand::value v, RawEvent* r);
  void read_arg(simdjson::ondemand::raw_json_string k, simdjson::ondemand::value av, Args* a);
  void check_required(const RawEvent& r) const;
  void copy_args(const Args& a, Event* e) const;
  void add_shapes(Event* e);  // from shapes_
  void set_sync(const RawEvent& r, Event* e) const;
  void add_collective(std::string_view name, const Args& a, Event* e);
  void parse_distributed_info(simdjson::ondemand::value v);
  void parse_traced_ranks(simdjson::ondemand::value v);
  void parse_pg_config(simdjson::ondemand::value v);
  void parse_device_properties(simdjson::ondemand::value v);
  uint32_t intern(std::string_view s);
  bool is_comm_name(uint32_t id);
  int64_t id_of(simdjson::ondemand::value v, std::string_view field, bool* from_string);
  int64_t int_of(simdjson::ondemand::value v, std::string_view field);
  int32_t rank_field(int64_t v, std::string_view field) const;
  TimeNs time_of(simdjson::ondemand::value v, std::string_view field);

  // Which of a later part's event fields hold the id of a string pid or tid (id_of), which the
  // part numbered on its own: string_id_fields_ holds these bits per kept event.
  static constexpr uint8_t kStringPid = 1, kStringTid = 2, kDeviceOfPid = 4, kStreamOfTid = 8;

  const char* json_;
  size_t size_;
  std::string label_;
  Part part_;
  size_t whole_size_;
  EventTable table_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> name_ids_;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> string_ids_;
  std::vector<uint8_t> string_id_fields_;  // a later part's only
  Shapes shapes_;
  std::vector<int8_t> comm_name_;  // by name id: is_comm_kernel, -1 until asked
  uint64_t event_index_ = 0;
  const char* event_pos_ = nullptr;
  const char* events_end_ = nullptr;
  bool have_base_ = false;
  bool in_tail_ = false;
  bool saw_events_ = false;
  bool saw_nodes_ = false, saw_schema_ = false;  // a PyTorch execution trace's keys
};

void Loader::fail_event(std::string_view field, std::string_view expected) const {
  throw InputError(label_ + ": event #" + std::to_string(event_index_) + " (byte " +
                   std::to_string(offset_of(event_pos_)) + "): field '" + std::string(field) +
                   "': expected " + std::string(expected));
}

void Loader::fail_json(simdjson::error_code code) const {
  // The parser's buffers could not be allocated: the machine's limit, not the file's fault.
  if (code == simdjson::MEMALLOC)
    throw InputError(label_ + ": out of memory while parsing its " + common::describe_bytes(size_) +
                     " of JSON");
  std::string where = event_pos_
                          ? " in event #" + std::to_string(event_index_) + " (starting at byte " +
                                std::to_string(offset_of(event_pos_)) + ")"
                          : "";
  throw InputError(label_ + ": invalid JSON" + where + ": " + simdjson::error_message(code));
}

uint32_t Loader::intern(std::string_view s) {
  auto it = name_ids_.find(s);
  if (it != name_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(table_.names.size());
  table_.names.emplace_back(s);
  name_ids_.emplace(std::string(s), id);
  return id;
}

// Kernels repeat a few hundred names: each is tested against the collective names once.
bool Loader::is_comm_name(uint32_t id) {
  if (id >= comm_name_.size()) comm_name_.resize(table_.names.size(), -1);
  int8_t& c = comm_name_[id];
  if (c < 0) c = is_comm_kernel(table_.names[id]) ? 1 : 0;
  return c != 0;
}

// pid and tid may be integers or strings ("Spans", "stream 7", ""); strings get negative ids so
// they never collide with OS ids.
int64_t Loader::id_of(value v, std::string_view field, bool* from_string) {
  *from_string = false;
  json_type t;
  if (v.type().get(t)) fail_event(field, "an integer or a string");
  if (t == json_type::number) {
    int64_t i;
    if (!v.get_int64().get(i)) return i;
    double d;
    if (!v.get_double().get(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
    fail_event(field, "an integer or a string");
  }
  if (t == json_type::string) {
    std::string_view s;
    if (v.get_string().get(s)) fail_event(field, "a valid string");
    // "stream 7" (legacy GPU tids) carry the number itself.
    if (s.substr(0, 7) == "stream ") {
      int64_t n = 0;
      auto r = std::from_chars(s.data() + 7, s.data() + s.size(), n);
      if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return n;
    }
    *from_string = true;
    auto it = string_ids_.find(s);
    if (it != string_ids_.end()) return it->second;
    const int64_t id = -1000000 - static_cast<int64_t>(string_ids_.size());
    string_ids_.emplace(std::string(s), id);
    return id;
  }
  fail_event(field, "an integer or a string");
}

// Ranks (and world sizes) are int32 indices >= 0: a larger value would be truncated into
// another rank and change the joined graph.
int32_t Loader::rank_field(int64_t v, std::string_view field) const {
  if (v < 0 || v > INT32_MAX)
    throw InputError(label_ + ": field '" + std::string(field) +
                     "': expected an integer between 0 and 2^31 - 1, got " + std::to_string(v));
  return static_cast<int32_t>(v);
}

int64_t Loader::int_of(value v, std::string_view field) {
  int64_t i;
  if (!v.get_int64().get(i)) return i;
  double d;
  if (!v.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9.2e18)
    return static_cast<int64_t>(d);
  std::string_view s;
  if (!v.get_string().get(s)) {
    // Some exporters write ids as strings of digits, ROCm streams as hex ("0x0").
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      s.remove_prefix(2);
      base = 16;
    }
    auto r = std::from_chars(s.data(), s.data() + s.size(), i, base);
    if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size()) return i;
  }
  fail_event(field, "an integer");
}

TimeNs Loader::time_of(value v, std::string_view field) {
  json_type t;
  if (v.type().get(t) || t != json_type::number) fail_event(field, "a number (microseconds)");
  std::string_view tok = v.raw_json_token();
  int64_t ns;
  if (!parse_us_token_to_ns(tok, &ns)) {
    double us = 0;
    if (!v.get_double().get(us) && std::fabs(us) >= static_cast<double>(kMaxTraceUs))
      fail_event(field, "a time within +-" + std::to_string(kMaxTraceUs) +
                            " us (2^62 ns); this one is too large");
    fail_event(field, "a number (microseconds)");
  }
  return ns;
}

void Loader::parse_distributed_info(value v) {
  object o;
  if (v.get_object().get(o)) return;  // tolerate odd shapes: the field is informational
  for (auto f : o) {
    simdjson::ondemand::raw_json_string k;
    if (f.key().get(k)) fail_json(simdjson::TAPE_ERROR);
    value fv = f.value();
    int64_t i;
    std::string_view s;
    if (k == "rank") {
      if (!fv.get_int64().get(i)) table_.rank = rank_field(i, "distributedInfo.rank");
    } else if (k == "world_size") {
      if (!fv.get_int64().get(i)) {
        table_.world_size = rank_field(i, "distributedInfo.world_size");
        LUMOS_EXPECT(i > 0, label_ +
                                ": field 'distributedInfo.world_size': expected a positive "
                                "integer, got " +
                                std::to_string(i));
      }
    } else if (k == "backend") {
      if (!fv.get_string().get(s)) table_.backend = std::string(s);
    } else if (k == "lumos_traced_ranks") {
      parse_traced_ranks(fv);
    } else if (k == "pg_config") {
      parse_pg_config(fv);
    }
  }
  LUMOS_EXPECT(table_.rank < 0 || table_.world_size <= 0 || table_.rank < table_.world_size,
               label_ + ": field 'distributedInfo.rank': expected a rank below the world size " +
                   std::to_string(table_.world_size) + ", got " + std::to_string(table_.rank));
}

// Informational, like the rest of distributedInfo: entries of another shape are left out.
void Loader::parse_pg_config(value v) {
  simdjson::ondemand::array a;
  if (v.get_array().get(a)) return;
  for (auto x : a) {
    object o;
    if (x.get_object().get(o)) continue;
    EventTable::ProcessGroupConfig pg;
    for (auto f : o) {
      simdjson::ondemand::raw_json_string k;
      if (f.key().get(k)) fail_json(simdjson::TAPE_ERROR);
      value fv = f.value();
      std::string_view s;
      int64_t i;
      if (k == "pg_name" && !fv.get_string().get(s))
        pg.name = std::string(s);
      else if (k == "pg_desc" && !fv.get_string().get(s))
        pg.desc = std::string(s);
      else if (k == "pg_size" && !fv.get_int64().get(i) && i > 0 && i <= 0x7fffffff)
        pg.size = static_cast<int32_t>(i);
    }
    if (!pg.name.empty()) table_.pg_config.push_back(std::move(pg));
  }
}

// Unlike the informational fields, the list decides which ranks a folder must hold: refused when
// malformed rather than ignored.
void Loader::parse_traced_ranks(value v) {
  const std::string what =
      label_ + ": field 'distributedInfo.lumos_traced_ranks': expected an array of ranks";
  simdjson::ondemand::array a;
  LUMOS_EXPECT(!v.get_array().get(a), what);
  for (auto x : a) {
    int64_t r;
    LUMOS_EXPECT(!x.get_int64().get(r) && r >= 0 && r <= 0x7fffffff, what + " (0 .. 2^31-1)");
    table_.traced_ranks.push_back(static_cast<int32_t>(r));
  }
}

void Loader::parse_device_properties(value v) {
  simdjson::ondemand::array a;
  if (v.get_array().get(a)) return;
  for (auto elem : a) {
    object o;
    if (elem.get_object().get(o)) continue;
    for (auto f : o) {
      simdjson::ondemand::raw_json_string k;
      if (f.key().get(k)) fail_json(simdjson::TAPE_ERROR);
      std::string_view s;
      if (k == "name" && table_.gpu_name.empty() && !f.value().get_string().get(s))
        table_.gpu_name = std::string(s);
    }
  }
}

EventKind kind_of_cat(std::string_view cat, bool* keep) {
  *keep = true;
  if (cat == "cpu_op" || cat == "Operator") return EventKind::kCpuOp;
  if (cat == "user_annotation") return EventKind::kUserAnnotation;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") return EventKind::kRuntime;
  if (cat == "kernel" || cat == "Kernel") return EventKind::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return EventKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return EventKind::kMemset;
  if (cat == "cuda_sync") return EventKind::kSync;
  *keep = false;
  return EventKind::kCpuOp;
}

// [[d0, d1, ...], [], ...]: kept for shape-aware cost models; odd shapes are ignored.
void read_input_dims(value av, Args* a, Shapes* s) {
  simdjson::ondemand::array outer;
  if (av.get_array().get(outer)) return;
  a->has_dims = true;
  for (auto in : outer) {
    simdjson::ondemand::array inner;
    if (!in.get_array().get(inner)) {
      for (auto d : inner) {
        int64_t x;
        if (!d.get_int64().get(x)) s->dims.push_back(x);
      }
    }
    s->ends.push_back(static_cast<uint32_t>(s->dims.size()));
  }
}

void read_input_types(value av, Shapes* s) {
  simdjson::ondemand::array types;
  if (av.get_array().get(types)) return;
  for (auto ty : types) {
    std::string_view sv;
    s->types.push_back(ty.get_string().get(sv) ? std::string_view() : sv);
  }
}

inline void Loader::read_arg(simdjson::ondemand::raw_json_string k, value av, Args* a) {
  if (k == "correlation")
    a->correlation = int_of(av, "args.correlation");
  else if (k == "External id" || k == "external id")
    a->external_id = int_of(av, "args.External id");
  else if (k == "stream")
    a->stream = int_of(av, "args.stream");
  else if (k == "device")
    a->device = int_of(av, "args.device");
  else if (k == "wait_on_stream")
    a->wait_on_stream = int_of(av, "args.wait_on_stream");
  else if (k == "wait_on_cuda_event_record_corr_id")
    a->wait_on_record_corr = int_of(av, "args.wait_on_cuda_event_record_corr_id");
  else if (k == "bytes")
    a->bytes = int_of(av, "args.bytes");
  else if (k == "cuda_sync_kind") {
    if (av.get_string().get(a->sync_kind)) fail_event("args.cuda_sync_kind", "a string");
  } else if (k == "Collective name") {
    if (av.get_string().get(a->collective_name)) fail_event("args.Collective name", "a string");
  } else if (k == "dtype") {
    if (av.get_string().get(a->dtype)) a->dtype = {};
  } else if (k == "Process Group Name") {
    if (av.get_string().get(a->pg_name)) a->pg_name = {};
  } else if (k == "Process Group Description") {
    if (av.get_string().get(a->pg_desc)) a->pg_desc = {};
  } else if (k == "In msg nelems")
    a->in_nelems = int_of(av, "args.In msg nelems");
  else if (k == "Out msg nelems")
    a->out_nelems = int_of(av, "args.Out msg nelems");
  else if (k == "Group size")
    a->group_size = int_of(av, "args.Group size");
  else if (k == "Seq")
    a->seq = int_of(av, "args.Seq");
  else if (k == "Input Dims")
    read_input_dims(av, a, &shapes_);
  else if (k == "Input type")
    read_input_types(av, &shapes_);
}

// Flow, metadata and instant events need not carry a numeric ts; decided after 'ph'.
inline void Loader::read_ts(value v, RawEvent* r) {
  json_type t;
  if (!v.type().get(t) && t == json_type::number) {
    r->ts = time_of(v, "ts");
    r->has_ts = true;
  }
}

inline void Loader::read_dur(value v, RawEvent* r) {
  json_type t;
  if (!v.type().get(t) && t == json_type::number) {
    r->dur = time_of(v, "dur");
  } else {
    r->dur = -1;  // reported by check_required if the event is kept
  }
  r->has_dur = true;
}

inline void Loader::read_args(value v, RawEvent* r) {
  object args;
  if (v.get_object().get(args)) return;  // some exporters write "args": null
  r->have_args = true;
  for (auto af : args) {
    simdjson::ondemand::raw_json_string k;
    if (auto err = af.key().get(k)) fail_json(err);
    value av;
    if (auto err = af.value().get(av)) fail_json(err);
    read_arg(k, av, &r->args);
  }
}

void Loader::parse_event(object obj) {
  RawEvent r;
  shapes_.clear();
  // Once ph and cat show that the event is not modelled (flows, python_function, ...), the rest
  // of it is skipped unparsed: most of a large trace is such events. On-demand objects are read
  // in one pass, so each field is handled as it comes.
  bool skip = false;
  for (auto field : obj) {
    simdjson::ondemand::raw_json_string key;
    if (auto err = field.key().get(key)) fail_json(err);
    if (skip) continue;
    value v;
    if (auto err = field.value().get(v)) fail_json(err);
    if (key == "ph") {
      if (v.get_string().get(r.ph)) fail_event("ph", "a string");
      skip = r.ph != "X";
    } else if (key == "cat") {
      if (v.get_string().get(r.cat)) fail_event("cat", "a string");
      bool keep = false;
      kind_of_cat(r.cat, &keep);
      skip = !keep;
    } else if (key == "name") {
      if (v.get_string().get(r.name)) fail_event("name", "a string");
      r.has_name = true;
    } else if (key == "pid") {
      r.pid = id_of(v, "pid", &r.pid_is_string);
      r.has_pid = true;
    } else if (key == "tid") {
      r.tid = id_of(v, "tid", &r.tid_is_string);
      r.has_tid = true;
    } else if (key == "ts") {
      read_ts(v, &r);
    } else if (key == "dur") {
      read_dur(v, &r);
    } else if (key == "args") {
      read_args(v, &r);
    }
  }
  if (r.ph != "X") return;
  bool keep = false;
  const EventKind kind = kind_of_cat(r.cat, &keep);
  if (!keep) return;
  check_required(r);

  Event e;
  e.kind = kind;
  e.name = intern(r.name);
  e.pid = r.pid;
  e.tid = r.tid;
  e.ts_ns = r.ts;
  e.dur_ns = r.dur;
  e.index = static_cast<uint32_t>(event_index_);
  if (r.have_args) copy_args(r.args, &e);
  // User annotations carry dims too: PyTorch's "nccl:all_reduce" names a collective's tensor.
  if ((kind == EventKind::kCpuOp || kind == EventKind::kUserAnnotation) && r.args.has_dims)
    add_shapes(&e);
  uint8_t string_fields = (r.pid_is_string ? kStringPid : 0) | (r.tid_is_string ? kStringTid : 0);
  if (e.is_gpu_op()) {
    // GPU events: pid is the device and tid the stream when args lack them.
    if (e.device < 0) {
      if (r.pid > INT32_MAX) fail_event("pid", "a device index below 2^31 on a GPU event");
      e.device = static_cast<int32_t>(r.pid);
      if (r.pid_is_string) string_fields |= kDeviceOfPid;
    }
    if (e.stream < 0) {
      e.stream = r.tid;
      if (r.tid_is_string) string_fields |= kStreamOfTid;
    }
    if (e.correlation < 0 && kind != EventKind::kKernel) e.correlation = -1;
  }
  if (kind == EventKind::kSync) {
    if (e.device < 0 && r.pid_is_string) string_fields |= kDeviceOfPid;
    set_sync(r, &e);
  }
  if (kind == EventKind::kRuntime && r.have_args && r.args.correlation < 0 &&
      runtime_role(r.name) == RuntimeRole::kLaunch) {
    e.correlation = -1;
  }
  if (kind == EventKind::kKernel && is_comm_name(e.name)) add_collective(r.name, r.args, &e);
  table_.events.push_back(e);
  if (part_ == Part::kEvents) string_id_fields_.push_back(string_fields);
}

// The fields every kept event needs, checked in a fixed order so that messages do not depend on
// the order of fields in the file.
void Loader::check_required(const RawEvent& r) const {
  if (!r.has_name) fail_event("name", "a string");
  if (!r.has_ts) fail_event("ts", "a number (microseconds)");
  if (!r.has_dur) fail_event("dur", "a number (microseconds)");
  if (r.dur < 0) fail_event("dur", "a non-negative number (microseconds)");
  // ts and dur are each within +-2^62 ns (parse_us_token_to_ns), so ts + dur cannot overflow;
  // the end of an event must still be a representable trace time.
  if (r.ts + r.dur > kMaxTraceUs * 1000)
    fail_event("ts", "ts + dur within " + std::to_string(kMaxTraceUs) +
                         " us (2^62 ns); this event ends too late");
  if (!r.has_pid) fail_event("pid", "an integer or a string");
  if (!r.has_tid) fail_event("tid", "an integer or a string");
}

void Loader::copy_args(const Args& a, Event* e) const {
  e->correlation = a.correlation;
  e->external_id = a.external_id;
  e->stream = a.stream;
  // A device id is an index below 2^31; a larger one would silently alias another device.
  if (a.device < -1 || a.device > INT32_MAX)
    fail_event("args.device",
               "a device index between 0 and 2^31 - 1, got " + std::to_string(a.device));
  e->device = static_cast<int32_t>(a.device);
  e->wait_on_stream = a.wait_on_stream;
  e->wait_on_record_corr = a.wait_on_record_corr;
  e->memcpy_bytes = a.bytes;
}

void Loader::add_shapes(Event* e) {
  e->shapes = static_cast<int32_t>(table_.shape_offset.size() - 1);
  const Shapes& s = shapes_;
  for (size_t i = 0; i < s.ends.size(); ++i) {
    table_.dims.insert(table_.dims.end(), s.dims.begin() + (i > 0 ? s.ends[i - 1] : 0),
                       s.dims.begin() + s.ends[i]);
    table_.input_offset.push_back(static_cast<uint32_t>(table_.dims.size()));
    table_.input_type.push_back(intern(i < s.types.size() ? s.types[i] : std::string_view()));
  }
  table_.shape_offset.push_back(static_cast<uint32_t>(table_.input_offset.size() - 1));
}

void Loader::set_sync(const RawEvent& r, Event* e) const {
  std::string_view k = r.args.sync_kind.empty() ? r.name : r.args.sync_kind;
  if (k == "Context Sync")
    e->sync = SyncKind::kContext;
  else if (k == "Stream Sync")
    e->sync = SyncKind::kStream;
  else if (k == "Event Sync")
    e->sync = SyncKind::kEvent;
  else if (k == "Stream Wait Event")
    e->sync = SyncKind::kStreamWaitEvent;
  else
    fail_event("args.cuda_sync_kind",
               "one of Context Sync, Stream Sync, Event Sync, Stream Wait Event");
  if (e->correlation < 0)
    fail_event("args.correlation",
               "a correlation id of 0 or more on a cuda_sync event (the runtime call it waits in)");
  if (e->device < 0) {
    if (r.pid > INT32_MAX) fail_event("pid", "a device index below 2^31 on a cuda_sync event");
    e->device = static_cast<int32_t>(r.pid);
  }
}

void Loader::add_collective(std::string_view name, const Args& a, Event* e) {
  CollectiveInfo ci = collective_from_kernel_name(name);
  if (!a.collective_name.empty()) ci.type = collective_from_arg(a.collective_name);
  if (!a.dtype.empty()) ci.dtype = std::string(a.dtype);
  ci.in_nelems = a.in_nelems;
  ci.out_nelems = a.out_nelems;
  if (a.group_size > INT32_MAX)
    fail_event("args.Group size", "a group size below 2^31, got " + std::to_string(a.group_size));
  ci.group_size = static_cast<int32_t>(a.group_size);
  ci.seq = a.seq;
  ci.process_group = std::string(a.pg_name);
  ci.process_group_desc = std::string(a.pg_desc);
  e->collective = static_cast<int32_t>(table_.collectives.size());
  table_.collectives.push_back(std::move(ci));
}

EventTable Loader::run() {
  // A UTF-8 byte order mark (Windows tools and some editors write one) is not JSON: it is
  // skipped, and byte offsets in messages still count from the file's start.
  const size_t bom = size_ >= 3 && std::string_view(json_, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  parse_document(json_ + bom, size_ - bom);
  return finish();
}

void Loader::parse_document(const char* text, size_t n, simdjson::ondemand::parser* parser) {
  if (table_.path.empty()) {
    table_.path = label_;
    table_.json_bytes = whole_size_;
    table_.events.reserve(whole_size_ / 400);
  }
  // One parser per thread, reused: its index buffers are as large as the biggest trace seen, and
  // allocating them afresh for every file costs more than parsing (page faults).
  thread_local simdjson::ondemand::parser own_parser;
  if (parser == nullptr) parser = &own_parser;
  simdjson::ondemand::document doc;
  if (auto err = parser->iterate(text, n, n + simdjson::SIMDJSON_PADDING).get(doc)) fail_json(err);
  json_type t;
  if (auto err = doc.type().get(t)) fail_json(err);
  auto parse_events = [&](simdjson::ondemand::array arr) {
    for (auto elem : arr) {
      object o;
      const char* pos = nullptr;
      if (!doc.current_location().get(pos)) event_pos_ = pos;
      if (auto err = elem.get_object().get(o)) {
        if (err == simdjson::INCORRECT_TYPE) fail_event("(event)", "a JSON object");
        fail_json(err);
      }
      parse_event(o);
      ++event_index_;
    }
    if (doc.current_location().get(events_end_)) events_end_ = nullptr;
  };
  // simdjson refuses a root whose last token is not its closer without saying where: name the
  // last byte, which is either text after the document or the cut end of a truncated file.
  auto fail_root = [&](simdjson::error_code err, char closer) {
    const char* last = text + n;
    while (last > text && std::isspace(static_cast<unsigned char>(last[-1]))) --last;
    if (err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT && last > text && last[-1] != closer)
      throw InputError(label_ + ": invalid JSON: the document does not end with '" + closer +
                       "' (byte " + std::to_string(offset_of(last - 1)) +
                       " is the last): text after the document, or a truncated file");
    fail_json(err);
  };
  if (t == json_type::array) {
    simdjson::ondemand::array arr;
    if (auto err = doc.get_array().get(arr)) fail_root(err, ']');
    parse_events(arr);
    saw_events_ = true;
  } else if (t == json_type::object) {
    object top;
    if (auto err = doc.get_object().get(top)) fail_root(err, '}');
    for (auto field : top) {
      simdjson::ondemand::raw_json_string key;
      if (auto err = field.key().get(key)) fail_json(err);
      value v;
      if (auto err = field.value().get(v)) fail_json(err);
      if (key == "traceEvents") {
        if (in_tail_) throw InputError(label_ + ": a second 'traceEvents' after the first");
        simdjson::ondemand::array arr;
        if (v.get_array().get(arr))
          throw InputError(label_ + ": field 'traceEvents': expected an array of events");
        parse_events(arr);
        event_pos_ = nullptr;
        saw_events_ = true;
      } else if (key == "baseTimeNanoseconds") {
        int64_t b;
        if (v.get_int64().get(b))
          throw InputError(label_ + ": field 'baseTimeNanoseconds': expected an integer");
        table_.base_time_ns = b;
        have_base_ = true;
      } else if (key == "distributedInfo") {
        parse_distributed_info(v);
      } else if (key == "deviceProperties") {
        parse_device_properties(v);
      } else if (key == "nodes") {
        saw_nodes_ = true;
      } else if (key == "schema") {
        saw_schema_ = true;
      }
    }
  } else {
    throw InputError(label_ + ": expected a JSON object with 'traceEvents' or an array of events");
  }
  // Text after the document (a second trace appended to the first) would otherwise be ignored.
  // (current_location fails with OUT_OF_BOUNDS at the end of the input.)
  if (const char* pos = nullptr; doc.current_location().get(pos) == simdjson::SUCCESS)
    throw InputError(label_ + ": unexpected text after the JSON document at byte " +
                     std::to_string(offset_of(pos)) + " (expected one trace per file)");
}

void Loader::parse_tail(const char* text, size_t n) {
  in_tail_ = true;
  parse_document(text, n);
  in_tail_ = false;
}

EventTable Loader::finish() {
  if (!saw_events_)
    throw NotKinetoTrace(label_ + (saw_nodes_ && saw_schema_
                                       ? ": a PyTorch execution trace ('schema' and 'nodes'), not "
                                         "a Kineto trace (no 'traceEvents')"
                                       : ": field 'traceEvents': missing (expected an array of "
                                         "events)"));
  table_.events_in_file = event_index_;
  LUMOS_EXPECT(!table_.events.empty(),
               label_ + ": empty trace: no CPU operator, runtime or GPU events in 'traceEvents'");
  return std::move(table_);
}

void Loader::absorb(Loader&& later) {
  const EventTable& b = later.table_;
  // Names and string ids are numbered in the order they first appear; the later part's come after
  // the head's, so interning them in the later part's order gives the numbers one loader gives.
  std::vector<uint32_t> name_of(b.names.size());
  for (size_t k = 0; k < b.names.size(); ++k) name_of[k] = intern(b.names[k]);
  std::vector<const std::string*> string_k(later.string_ids_.size());
  for (const auto& [s, id] : later.string_ids_) string_k[static_cast<size_t>(-1000000 - id)] = &s;
  std::vector<int64_t> string_id_of(string_k.size());
  for (size_t k = 0; k < string_k.size(); ++k) {
    auto it = string_ids_.find(*string_k[k]);
    if (it == string_ids_.end())
      it = string_ids_.emplace(*string_k[k], -1000000 - static_cast<int64_t>(string_ids_.size()))
               .first;
    string_id_of[k] = it->second;
  }
  auto string_id = [&](int64_t id) { return string_id_of[static_cast<size_t>(-1000000 - id)]; };

  const auto first_index = static_cast<uint32_t>(event_index_);
  const auto collectives_before = static_cast<int32_t>(table_.collectives.size());
  const auto shapes_before = static_cast<int32_t>(table_.shape_offset.size() - 1);
  const auto inputs_before = static_cast<uint32_t>(table_.input_offset.size() - 1);
  const auto dims_before = static_cast<uint32_t>(table_.dims.size());
  table_.events.reserve(table_.events.size() + b.events.size());
  for (size_t i = 0; i < b.events.size(); ++i) {
    Event e = b.events[i];
    e.name = name_of[e.name];
    e.index += first_index;
    if (e.collective >= 0) e.collective += collectives_before;
    if (e.shapes >= 0) e.shapes += shapes_before;
    if (const uint8_t f = later.string_id_fields_[i]) {
      if (f & kStringPid) e.pid = string_id(e.pid);
      if (f & kStringTid) e.tid = string_id(e.tid);
      if (f & kDeviceOfPid) e.device = static_cast<int32_t>(e.pid);
      if (f & kStreamOfTid) e.stream = e.tid;
    }
    table_.events.push_back(e);
  }
  for (size_t k = 1; k < b.shape_offset.size(); ++k)
    table_.shape_offset.push_back(b.shape_offset[k] + inputs_before);
  for (size_t k = 1; k < b.input_offset.size(); ++k)
    table_.input_offset.push_back(b.input_offset[k] + dims_before);
  table_.dims.insert(table_.dims.end(), b.dims.begin(), b.dims.end());
  for (const uint32_t t : b.input_type) table_.input_type.push_back(name_of[t]);
  for (const CollectiveInfo& c : b.collectives) table_.collectives.push_back(c);
  event_index_ += later.event_index_;
}

// Parsers for the later parts of split parses, kept for the process's life as each thread's own
// is: a thread's own parser would be freed when the thread ends, unmapping its index while the
// caller waits on the join, and the next large trace would fault a new one in.
class PartParsers {
 public:
  std::unique_ptr<simdjson::ondemand::parser> take() {
    std::lock_guard<std::mutex> lock(m_);
    if (free_.empty()) return std::make_unique<simdjson::ondemand::parser>();
    auto p = std::move(free_.back());
    free_.pop_back();
    return p;
  }
  void give_back(std::unique_ptr<simdjson::ondemand::parser> p) {
    std::lock_guard<std::mutex> lock(m_);
    free_.push_back(std::move(p));
  }

 private:
  std::mutex m_;
  std::vector<std::unique_ptr<simdjson::ondemand::parser>> free_;
};

PartParsers& part_parsers() {
  static PartParsers* parsers = new PartParsers;  // never freed, as said above
  return *parsers;
}

}  // namespace

namespace detail {

std::optional<EventTable> parse_trace_parts(const char* json, size_t size, size_t bom,
                                            const std::string& label, const TraceCut& cut,
                                            PartThread* thread) {
  const size_t rest_bytes = cut.close + 1 - cut.open;
  Loader rest(json + cut.open, rest_bytes, label, Loader::Part::kEvents);
  bool rest_ok = false;
  // Whoever comes first parses the later part: the second thread, or this one when the head is
  // done before that thread got a core (a busy machine), which then costs nothing but its start.
  std::atomic<bool> rest_taken{false};
  auto parse_rest = [&] {
    if (rest_taken.exchange(true)) return;
    try {
      std::unique_ptr<simdjson::ondemand::parser> parser = part_parsers().take();
      rest.parse_document(json + cut.open, rest_bytes, parser.get());
      rest_ok = true;
      part_parsers().give_back(std::move(parser));
    } catch (...) {
    }
  };
  std::optional<PartThread> own_thread;
  if (thread == nullptr) {
    try {
      thread = &own_thread.emplace();
    } catch (...) {
      // No second thread: this one parses both parts.
    }
  }
  if (thread) thread->post(parse_rest);
  Loader head(json, cut.comma + 2, label, Loader::Part::kHead, size);
  bool head_ok = false;
  try {
    head.parse_document(json + bom, cut.comma + 2 - bom);
    // The head's traceEvents must end at the bracket written in, just before its closing brace.
    head_ok = head.events_end() == json + cut.comma + 1;
    if (head_ok && cut.tail < size) head.parse_tail(json + cut.tail, size - cut.tail);
  } catch (...) {
    head_ok = false;
  }
  if (head_ok)
    parse_rest();
  else
    rest_taken.store(true);  // nobody needs the later part now
  if (thread) thread->wait();
  if (!head_ok || !rest_ok) return std::nullopt;
  head.absorb(std::move(rest));
  return head.finish();
}

struct PieceLoader::Impl {
  Loader loader;
};

PieceLoader::PieceLoader(const std::string& label, size_t size_hint)
    : impl_(new Impl{Loader(nullptr, size_hint, label, Loader::Part::kHead, size_hint)}) {}

PieceLoader::~PieceLoader() = default;

bool PieceLoader::head(const char* text, size_t n) {
  const size_t bom = n >= 3 && std::string_view(text, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  impl_->loader.parse_document(text + bom, n - bom);
  return impl_->loader.events_end() == text + n - 1;
}

bool PieceLoader::events(const char* text, size_t n) {
  if (n < 2 || text[0] != '[' || text[n - 1] != ']') return false;
  impl_->loader.parse_document(text, n);
  return true;
}

void PieceLoader::tail(const char* text, size_t n) {
  impl_->loader.parse_tail(text, n);
}

EventTable PieceLoader::finish(size_t text_bytes) {
  impl_->loader.set_text_bytes(text_bytes);
  return impl_->loader.finish();
}

}  // namespace detail

std::vector<std::vector<int64_t>> EventTable::input_dims(const Event& e) const {
  std::vector<std::vector<int64_t>> out;
  if (e.shapes < 0) return out;
  for (uint32_t i = shape_offset[e.shapes]; i < shape_offset[e.shapes + 1]; ++i)
    out.emplace_back(dims.begin() + input_offset[i], dims.begin() + input_offset[i + 1]);
  return out;
}

std::vector<std::string_view> EventTable::input_types(const Event& e) const {
  std::vector<std::string_view> out;
  if (e.shapes < 0) return out;
  for (uint32_t i = shape_offset[e.shapes]; i < shape_offset[e.shapes + 1]; ++i)
    out.push_back(names[input_type[i]]);
  return out;
}

bool parse_us_token_to_ns(std::string_view tok, int64_t* out_ns) {
  while (!tok.empty() &&
         (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t' ||
          tok.back() == ',' || tok.back() == '}' || tok.back() == ']'))
    tok.remove_suffix(1);
  if (tok.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (tok[0] == '-') {
    neg = true;
    i = 1;
  }
  int64_t whole = 0;
  size_t digits = 0;
  while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') {
    // Beyond kMaxTraceUs (2^62 ns): not a trace time; stopping here keeps whole * 1000 exact.
    if (whole > kMaxTraceUs / 10) return false;
    whole = whole * 10 + (tok[i] - '0');
    if (whole > kMaxTraceUs) return false;
    ++i;
    ++digits;
  }
  if (digits == 0) return false;
  int64_t frac_ns = 0;
  if (i < tok.size() && tok[i] == '.') {
    ++i;
    int64_t scale = 100;  // first fractional digit of a µs is 100 ns
    size_t fd = 0;
    int round_digit = -1;
    while (i < tok.size() && tok[i] >= '0' && tok[i] <= '9') {
      if (scale >= 1) {
        frac_ns += (tok[i] - '0') * scale;
        scale /= 10;
      } else if (round_digit < 0) {
        round_digit = tok[i] - '0';
      }
      ++i;
      ++fd;
    }
    if (fd == 0) return false;
    if (round_digit >= 5) ++frac_ns;
  }
  if (i < tok.size() && (tok[i] == 'e' || tok[i] == 'E')) {
    // Rare: fall back to a double for exponent notation.
    std::string s(tok);
    char* end = nullptr;
    const double us = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(us) ||
        std::fabs(us) > static_cast<double>(kMaxTraceUs))
      return false;
    *out_ns = static_cast<int64_t>(std::llround(us * 1000.0));
    return true;
  }
  if (i != tok.size()) return false;
  const int64_t ns = whole * 1000 + frac_ns;
  *out_ns = neg ? -ns : ns;
  return true;
}

EventTable parse_trace_json(const char* json, size_t size, const std::string& label) {
  Loader loader(json, size, label);
  return loader.run();
}

EventTable parse_trace_bytes(const char* data, size_t size, const std::string& label,
                             uint64_t max_bytes) {
  if (common::looks_gzip(data, size)) return parse_gzip_trace(data, size, label, max_bytes);
  std::vector<char> padded(size + simdjson::SIMDJSON_PADDING, 0);
  std::copy(data, data + size, padded.begin());
  return parse_trace_json_split(padded.data(), size, label);
}

namespace {

// The running count of /proc/loadavg (this thread included), or -1 where it cannot be read.
long running_threads() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1;
  double avg[3];
  long running = 0, total = 0;
  const int read =
      std::fscanf(f, "%lf %lf %lf %ld/%ld", &avg[0], &avg[1], &avg[2], &running, &total);
  std::fclose(f);
  return read == 5 ? running : -1;
}

// Whether no core is free for a second thread: as many threads running as there are cores, this
// one included, in each of `looks` reads of the running count a quarter of a millisecond apart.
// A parse in two parts then measured slower than one: 5% with one other process running on two
// cores. One read alone said "busy" at 4 in 10 starts on an idle machine (a process starting
// beside this one, a kernel thread): such a thread is gone by the next read, a busy process is
// not. False where it cannot tell.
bool cores_busy(int looks) {
  const auto cores = static_cast<long>(std::thread::hardware_concurrency());
  for (int k = 0; k < looks; ++k) {
    if (k > 0) std::this_thread::sleep_for(std::chrono::microseconds(250));
    const long running = running_threads();
    if (running < 0 || running < cores) return false;
  }
  return true;
}

}  // namespace

EventTable load_trace(const std::string& path, uint64_t max_bytes) {
  // A file that may hold (or inflate to) a text worth splitting gets a second thread before it
  // is read: a gzip trace's pieces are inflated on it ahead of the parse (stream_parse.cpp), a
  // plain text's later part is parsed on it (split_parse.cpp); a smaller text ends the thread
  // unused. With no core free, the text is parsed on this thread alone.
  constexpr uintmax_t kPartThreadMinFileBytes = uintmax_t{256} << 10;
  const std::string label = path == "-" ? "<stdin>" : path;
  std::optional<detail::PartThread> part_thread;
  std::error_code ec;
  const bool large =
      path != "-" && std::filesystem::file_size(path, ec) >= kPartThreadMinFileBytes && !ec;
  // A large file is worth half a millisecond of looking again (cores_busy) when busy.
  const bool split = !cores_busy(large ? 3 : 1);
  if (split && large) {
    try {
      part_thread.emplace();
    } catch (...) {
      // No second thread: the text is parsed on this one.
    }
  }
  // While this thread inflates a stream whole, the other faults the buffer in
  // (common/huge_pages.hpp).
  std::function<void(char*, size_t)> fault_in;
  if (part_thread) {
    fault_in = [&part_thread](char* p, size_t n) {
      part_thread->post([p, n] { common::populate_for_write(p, n); });
    };
  }
  common::FileBytes raw = common::read_regular_file(path, simdjson::SIMDJSON_PADDING, max_bytes);
  const size_t split_min_bytes = split ? kSplitParseMinBytes : SIZE_MAX;
  detail::PartThread* thread = part_thread ? &*part_thread : nullptr;
  if (common::looks_gzip(raw.data.data(), raw.size)) {
    return detail::parse_gzip(raw.data.data(), raw.size, label, max_bytes, kTracePieceBytes,
                              split_min_bytes, thread, fault_in, nullptr);
  }
  return detail::parse_split(raw.data.data(), raw.size, label, split_min_bytes, nullptr, thread);
}

}  // namespace lumos::trace
