#include "graph/graph_file.hpp"

#include <libdeflate.h>

#include <cstring>
#include <optional>
#include <string_view>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_bytes.hpp"

namespace lumos::graph {
namespace {

constexpr char kMagic[8] = {'L', 'G', 'R', 'A', 'P', 'H', 0, 0};
static_assert(sizeof(double) == 8, "graph files store IEEE-754 doubles");

// magic, version, section count, file length; then sections; then the CRC-32 trailer.
constexpr size_t kHeaderBytes = 24;
constexpr size_t kTrailerBytes = 4;

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
    if (!v.empty()) buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    buf_.append(s);
  }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

const char* section_name(uint32_t tag) {
  switch (tag) {
    case kMeta:
      return "meta";
    case kNodes:
      return "nodes";
    case kEdges:
      return "edges";
    case kWaves:
      return "waves";
    case kResources:
      return "resources";
    case kNames:
      return "names";
    case kSteps:
      return "steps";
  }
  return "unknown";
}

// Reads one section; every read is bounds-checked and every failure names the section.
class In {
 public:
  In(const char* p, size_t n, const std::string& label, const std::string& section)
      : p_(p), n_(n), label_(label), section_(section) {}
  template <typename T>
  T pod(const char* field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, p_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  // The count is checked against the bytes left before anything is allocated.
  template <typename T>
  std::vector<T> vec(const char* field) {
    const uint64_t count = pod<uint64_t>(field);
    if (count > (n_ - at_) / sizeof(T))
      fail(std::string(field) + ": " + std::to_string(count) + " entries of " +
           std::to_string(sizeof(T)) + " bytes do not fit in the " + std::to_string(n_ - at_) +
           " bytes left");
    std::vector<T> v(count);
    if (count > 0) std::memcpy(v.data(), p_ + at_, count * sizeof(T));
    at_ += count * sizeof(T);
    return v;
  }
  std::string str(const char* field) {
    const uint64_t len = pod<uint64_t>(field);
    need(len, field);
    std::string s(p_ + at_, len);
    at_ += len;
    return s;
  }
  // A record count, checked against the smallest size one record can have.
  uint64_t count(const char* field, size_t min_record_bytes) {
    const uint64_t n = pod<uint64_t>(field);
    if (n > (n_ - at_) / min_record_bytes)
      fail(std::string(field) + ": " + std::to_string(n) + " records cannot fit in the " +
           std::to_string(n_ - at_) + " bytes left");
    return n;
  }
  void expect_end() const {
    if (at_ != n_) fail(std::to_string(n_ - at_) + " unexpected bytes after the last field");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(label_ + ": corrupt graph file: section '" + section_ + "': " + what);
  }

 private:
  void need(uint64_t k, const char* field) {
    if (k > n_ - at_) fail(std::string(field) + ": truncated");
  }
  const char* p_;
  size_t n_;
  size_t at_ = 0;
  std::string label_, section_;
};

uint32_t crc32_of(const char* p, size_t n) {
  return libdeflate_crc32(0, p, n);
}

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
  uint64_t file_bytes = kHeaderBytes + kTrailerBytes;
  for (const auto& [tag, payload] : sections) file_bytes += 12 + payload.size();
  write_file_atomically(path, [&](std::ostream& os) {
    uint32_t crc = 0;
    auto put = [&](const void* p, size_t n) {
      crc = libdeflate_crc32(crc, p, n);
      os.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    };
    put(kMagic, sizeof(kMagic));
    const uint32_t version = kGraphFileVersion, count = static_cast<uint32_t>(sections.size());
    put(&version, 4);
    put(&count, 4);
    put(&file_bytes, 8);
    for (const auto& [tag, payload] : sections) {
      const uint64_t len = payload.size();
      put(&tag, 4);
      put(&len, 8);
      put(payload.data(), payload.size());
    }
    os.write(reinterpret_cast<const char*>(&crc), 4);
  });
}

bool is_graph_file(const std::string& path) {
  // Through the one input reader: opening a FIFO would wait for a writer.
  const std::optional<std::string> head = common::regular_file_prefix(path, 8);
  return head && head->size() == 8 && std::memcmp(head->data(), kMagic, 8) == 0;
}

void reseal_graph_bytes(std::string* bytes) {
  if (bytes->size() < kHeaderBytes + kTrailerBytes) return;
  const uint64_t file_bytes = bytes->size();
  std::memcpy(bytes->data() + 16, &file_bytes, 8);
  const uint32_t crc = crc32_of(bytes->data(), bytes->size() - kTrailerBytes);
  std::memcpy(bytes->data() + bytes->size() - kTrailerBytes, &crc, 4);
}

Graph read_graph_file(const std::string& path) {
  // A regular file only, within the input limit (common/file_bytes.hpp).
  const common::FileBytes file =
      common::read_regular_file(path, 0, common::max_trace_bytes(), "a .lgraph file");
  return read_graph_bytes(std::string_view(file.data.data(), file.size), path);
}

Graph read_graph_bytes(std::string_view bytes, const std::string& label) {
  auto fail = [&](const std::string& what) {
    throw InputError(label + ": corrupt graph file: " + what);
  };
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    fail("bad magic (not a .lgraph file)");
  if (bytes.size() < 12) fail("header: truncated (" + std::to_string(bytes.size()) + " bytes)");
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version < kGraphFileVersion)
    throw InputError(label + ": graph file version " + std::to_string(version) +
                     " was written by an older lumos (this lumos reads version " +
                     std::to_string(kGraphFileVersion) + "); re-run `lumos ingest` on the trace");
  if (version > kGraphFileVersion)
    throw InputError(label + ": graph file version " + std::to_string(version) +
                     " is not supported (this lumos reads version " +
                     std::to_string(kGraphFileVersion) +
                     "); it was written by a newer lumos, or re-run `lumos ingest`");
  if (bytes.size() < kHeaderBytes + kTrailerBytes)
    fail("header: truncated (" + std::to_string(bytes.size()) + " bytes)");
  uint32_t count;
  uint64_t file_bytes;
  std::memcpy(&count, bytes.data() + 12, 4);
  std::memcpy(&file_bytes, bytes.data() + 16, 8);
  if (file_bytes != bytes.size())
    fail("header: the file has " + std::to_string(bytes.size()) + " bytes but was written with " +
         std::to_string(file_bytes) + " (truncated or appended to)");
  uint32_t crc;
  const size_t end = bytes.size() - kTrailerBytes;
  std::memcpy(&crc, bytes.data() + end, 4);
  if (crc != crc32_of(bytes.data(), end))
    fail(
        "checksum mismatch: the file changed after it was written (damaged or edited); re-run "
        "`lumos ingest`");

  Graph g;
  size_t at = kHeaderBytes;
  uint32_t seen = 0;
  for (uint32_t s = 0; s < count; ++s) {
    if (end - at < 12)
      fail("section header " + std::to_string(s) + " of " + std::to_string(count) +
           ": runs past the end of the file");
    uint32_t tag;
    uint64_t len;
    std::memcpy(&tag, bytes.data() + at, 4);
    std::memcpy(&len, bytes.data() + at + 4, 8);
    at += 12;
    const std::string name = tag >= kMeta && tag <= kSteps ? std::string(section_name(tag))
                                                           : "tag " + std::to_string(tag);
    if (len > end - at)
      fail("section '" + name + "': its " + std::to_string(len) + " bytes run past the end");
    In sec(bytes.data() + at, len, label, name);
    if (tag >= kMeta && tag <= kSteps) {
      if (seen & (1u << tag)) sec.fail("appears twice");
      seen |= 1u << tag;
    }
    switch (tag) {
      case kMeta:
        g.t0_ns = sec.pod<int64_t>("t0_ns");
        g.rank = sec.pod<int32_t>("rank");
        g.source = sec.str("source");
        break;
      case kNodes:
        g.kind = sec.vec<NodeKind>("kind");
        g.cls = sec.vec<NodeClass>("class");
        g.resource = sec.vec<uint32_t>("resource");
        g.step = sec.vec<int32_t>("step");
        g.name = sec.vec<uint32_t>("name");
        g.event = sec.vec<int64_t>("event");
        g.dur_us = sec.vec<double>("dur_us");
        g.measured_start_us = sec.vec<double>("measured_start_us");
        break;
      case kEdges:
        g.pred_offset = sec.vec<uint32_t>("pred_offset");
        g.pred_index = sec.vec<NodeId>("pred_index");
        g.pred_lag_us = sec.vec<double>("pred_lag_us");
        g.pred_kind = sec.vec<EdgeKind>("pred_kind");
        break;
      case kWaves:
        g.wave_offset = sec.vec<uint32_t>("wave_offset");
        break;
      case kResources: {
        const uint64_t n = sec.count("resource count", 21);
        g.resources.reserve(n);
        for (uint64_t i = 0; i < n; ++i) {
          Resource r;
          const uint8_t kind = sec.pod<uint8_t>("resource kind");
          if (kind > static_cast<uint8_t>(ResourceKind::kStream))
            sec.fail("resource " + std::to_string(i) + ": unknown kind " + std::to_string(kind));
          r.kind = static_cast<ResourceKind>(kind);
          r.rank = sec.pod<int32_t>("resource rank");
          r.a = sec.pod<int64_t>("resource a");
          r.b = sec.pod<int64_t>("resource b");
          g.resources.push_back(r);
        }
        break;
      }
      case kNames: {
        const uint64_t n = sec.count("name count", 8);
        for (uint64_t i = 0; i < n; ++i) g.names.push_back(sec.str("name"));
        break;
      }
      case kSteps: {
        const uint64_t n = sec.count("step count", 24);
        for (uint64_t i = 0; i < n; ++i) {
          Step st;
          st.name = sec.str("step name");
          st.rank = sec.pod<int32_t>("step rank");
          st.marker = sec.pod<uint32_t>("step marker");
          st.measured_us = sec.pod<double>("step measured_us");
          g.steps.push_back(st);
        }
        break;
      }
      default:
        at += len;
        continue;  // a section from a newer writer
    }
    sec.expect_end();
    at += len;
  }
  if (at != end)
    fail(std::to_string(end - at) + " bytes after the last of the " + std::to_string(count) +
         " sections");
  for (uint32_t tag = kMeta; tag <= kSteps; ++tag)
    if (!(seen & (1u << tag))) fail("section '" + std::string(section_name(tag)) + "' is missing");
  validate(g, label);
  return g;
}

}  // namespace lumos::graph
