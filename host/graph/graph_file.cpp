#include "graph/graph_file.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "trace/file_bytes.hpp"

namespace lumos::graph {
namespace {

constexpr char kMagic[8] = {'L', 'G', 'R', 'A', 'P', 'H', 0, 0};
static_assert(sizeof(double) == 8, "graph files store IEEE-754 doubles");

enum Tag : uint32_t {
  kMeta = 1,   // t0_ns, rank, source
  kNodes = 2,  // per-node arrays
  kEdges = 3,  // predecessor CSR
  kWaves = 4,  // wave offsets
  kResources = 5,
  kNames = 6,
  kSteps = 7,
};

class Out {
 public:
  template <typename T>
  void pod(const T& v) {
    buf_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod<uint64_t>(v.size());
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    buf_.append(s);
  }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class In {
 public:
  In(const char* p, size_t n, const std::string& label) : p_(p), n_(n), label_(label) {}
  template <typename T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  template <typename T>
  std::vector<T> vec() {
    const uint64_t count = pod<uint64_t>();
    if (count > (n_ - at_) / sizeof(T)) fail("array length exceeds the section");
    std::vector<T> v(count);
    std::memcpy(v.data(), p_ + at_, count * sizeof(T));
    at_ += count * sizeof(T);
    return v;
  }
  std::string str() {
    const uint64_t len = pod<uint64_t>();
    need(len);
    std::string s(p_ + at_, len);
    at_ += len;
    return s;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(label_ + ": corrupt graph file: " + what);
  }

 private:
  void need(uint64_t k) {
    if (k > n_ - at_) fail("truncated section");
  }
  const char* p_;
  size_t n_;
  size_t at_ = 0;
  std::string label_;
};

}  // namespace

void write_graph_file(const Graph& g, const std::string& path) {
  std::vector<std::pair<uint32_t, std::string>> sections;
  {
    Out o;
    o.pod<int64_t>(g.t0_ns);
    o.pod<int32_t>(g.rank);
    o.str(g.source);
    sections.push_back({kMeta, o.take()});
  }
  {
    Out o;
    o.vec(g.kind);
    o.vec(g.cls);
    o.vec(g.resource);
    o.vec(g.step);
    o.vec(g.name);
    o.vec(g.event);
    o.vec(g.dur_us);
    o.vec(g.measured_start_us);
    sections.push_back({kNodes, o.take()});
  }
  {
    Out o;
    o.vec(g.pred_offset);
    o.vec(g.pred_index);
    o.vec(g.pred_lag_us);
    o.vec(g.pred_kind);
    sections.push_back({kEdges, o.take()});
  }
  {
    Out o;
    o.vec(g.wave_offset);
    sections.push_back({kWaves, o.take()});
  }
  {
    Out o;
    o.pod<uint64_t>(g.resources.size());
    for (const Resource& r : g.resources) {
      o.pod<uint8_t>(static_cast<uint8_t>(r.kind));
      o.pod<int32_t>(r.rank);
      o.pod<int64_t>(r.a);
      o.pod<int64_t>(r.b);
    }
    sections.push_back({kResources, o.take()});
  }
  {
    Out o;
    o.pod<uint64_t>(g.names.size());
    for (const auto& s : g.names) o.str(s);
    sections.push_back({kNames, o.take()});
  }
  {
    Out o;
    o.pod<uint64_t>(g.steps.size());
    for (const Step& s : g.steps) {
      o.str(s.name);
      o.pod<int32_t>(s.rank);
      o.pod<uint32_t>(s.marker);
      o.pod<double>(s.measured_us);
    }
    sections.push_back({kSteps, o.take()});
  }
  write_file_atomically(path, [&](std::ostream& os) {
    os.write(kMagic, sizeof(kMagic));
    const uint32_t version = kGraphFileVersion, count = static_cast<uint32_t>(sections.size());
    os.write(reinterpret_cast<const char*>(&version), 4);
    os.write(reinterpret_cast<const char*>(&count), 4);
    for (const auto& [tag, payload] : sections) {
      const uint64_t len = payload.size();
      os.write(reinterpret_cast<const char*>(&tag), 4);
      os.write(reinterpret_cast<const char*>(&len), 8);
      os.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    }
  });
}

bool is_graph_file(const std::string& path) {
  std::error_code ec;  // opening a FIFO would wait for a writer
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char m[8] = {};
  in.read(m, 8);
  return in.gcount() == 8 && std::memcmp(m, kMagic, 8) == 0;
}

Graph read_graph_file(const std::string& path) {
  const trace::FileBytes file =
      trace::read_regular_file(path, 0, trace::max_trace_bytes(), "a .lgraph file");
  const std::string_view bytes(file.data.data(), file.size);
  In head(bytes.data(), bytes.size(), path);
  char m[8];
  for (char& c : m) c = head.pod<char>();
  if (std::memcmp(m, kMagic, 8) != 0) head.fail("bad magic (not a .lgraph file)");
  const uint32_t version = head.pod<uint32_t>();
  if (version != kGraphFileVersion)
    throw InputError(path + ": graph file version " + std::to_string(version) +
                     " is not supported (this lumos reads version " +
                     std::to_string(kGraphFileVersion) + "); re-run `lumos ingest`");
  const uint32_t count = head.pod<uint32_t>();
  Graph g;
  size_t at = 16;
  uint32_t seen = 0;
  for (uint32_t s = 0; s < count; ++s) {
    if (bytes.size() - at < 12) head.fail("truncated section header");
    uint32_t tag;
    uint64_t len;
    std::memcpy(&tag, bytes.data() + at, 4);
    std::memcpy(&len, bytes.data() + at + 4, 8);
    at += 12;
    if (len > bytes.size() - at) head.fail("section " + std::to_string(tag) + " runs past the end");
    In sec(bytes.data() + at, len, path);
    switch (tag) {
      case kMeta:
        g.t0_ns = sec.pod<int64_t>();
        g.rank = sec.pod<int32_t>();
        g.source = sec.str();
        break;
      case kNodes:
        g.kind = sec.vec<NodeKind>();
        g.cls = sec.vec<NodeClass>();
        g.resource = sec.vec<uint32_t>();
        g.step = sec.vec<int32_t>();
        g.name = sec.vec<uint32_t>();
        g.event = sec.vec<int64_t>();
        g.dur_us = sec.vec<double>();
        g.measured_start_us = sec.vec<double>();
        break;
      case kEdges:
        g.pred_offset = sec.vec<uint32_t>();
        g.pred_index = sec.vec<NodeId>();
        g.pred_lag_us = sec.vec<double>();
        g.pred_kind = sec.vec<EdgeKind>();
        break;
      case kWaves:
        g.wave_offset = sec.vec<uint32_t>();
        break;
      case kResources: {
        const uint64_t n = sec.pod<uint64_t>();
        if (n > len / 21) sec.fail("resource count exceeds the section");
        for (uint64_t i = 0; i < n; ++i) {
          Resource r;
          r.kind = static_cast<ResourceKind>(sec.pod<uint8_t>());
          r.rank = sec.pod<int32_t>();
          r.a = sec.pod<int64_t>();
          r.b = sec.pod<int64_t>();
          g.resources.push_back(r);
        }
        break;
      }
      case kNames: {
        const uint64_t n = sec.pod<uint64_t>();
        if (n > len / 8) sec.fail("name count exceeds the section");
        for (uint64_t i = 0; i < n; ++i) g.names.push_back(sec.str());
        break;
      }
      case kSteps: {
        const uint64_t n = sec.pod<uint64_t>();
        if (n > len / 24) sec.fail("step count exceeds the section");
        for (uint64_t i = 0; i < n; ++i) {
          Step st;
          st.name = sec.str();
          st.rank = sec.pod<int32_t>();
          st.marker = sec.pod<uint32_t>();
          st.measured_us = sec.pod<double>();
          g.steps.push_back(st);
        }
        break;
      }
      default:
        break;  // a section from a newer writer
    }
    if (tag >= kMeta && tag <= kSteps) seen |= 1u << tag;
    at += len;
  }
  if (seen != 0xFE) head.fail("missing sections");
  for (NodeKind k : g.kind)
    if (static_cast<uint8_t>(k) > static_cast<uint8_t>(NodeKind::kStepMarker))
      head.fail("unknown node kind");
  for (NodeClass c : g.cls)
    if (static_cast<uint8_t>(c) > static_cast<uint8_t>(NodeClass::kMemory))
      head.fail("unknown node class");
  for (EdgeKind k : g.pred_kind)
    if (static_cast<uint8_t>(k) >= kNumEdgeKinds) head.fail("unknown edge kind");
  validate(g, path);
  return g;
}

}  // namespace lumos::graph
