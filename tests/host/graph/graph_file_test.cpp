// The .lgraph file round-trips exactly and rejects what is not a valid graph file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "common/error.hpp"
#include "fuzz/fuzz_cases.hpp"
#include "graph/graph_builder.hpp"
#include "graph/graph_file.hpp"
#include "replay/reference_replay.hpp"
#include "support/test_util.hpp"
#include "trace/demo_trace.hpp"
#include "trace/kineto_loader.hpp"

namespace {

lumos::graph::Graph demo_graph() {
  const std::string json = lumos::trace::demo_trace_json();
  const auto t = lumos::trace::parse_trace_bytes(json.data(), json.size(), "demo");
  return lumos::graph::build_graph(t).graph;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string file_bytes_of(const lumos::graph::Graph& g) {
  lumos::testing::TempDir tmp;
  lumos::graph::write_graph_file(g, tmp.file("g.lgraph"));
  return slurp(tmp.file("g.lgraph"));
}

// The message of reading these bytes, or "" when they load.
std::string read_error(const std::string& bytes) {
  try {
    lumos::graph::read_graph_bytes(bytes, "bad.lgraph");
  } catch (const lumos::InputError& e) {
    return e.what();
  }
  return "";
}

// Writes a graph, damaged after the fact as a hand edit would (so the writer's own checks do not
// stop it), with the checksum recomputed so that the structural checks are what must catch it.
std::string resealed_error(const lumos::graph::Graph& g) {
  std::string bytes = file_bytes_of(g);
  lumos::graph::reseal_graph_bytes(&bytes);
  return read_error(bytes);
}

bool same_graph(const lumos::graph::Graph& a, const lumos::graph::Graph& b) {
  return a.kind == b.kind && a.cls == b.cls && a.resource == b.resource && a.step == b.step &&
         a.name == b.name && a.event == b.event && a.dur_us == b.dur_us &&
         a.measured_start_us == b.measured_start_us && a.pred_offset == b.pred_offset &&
         a.pred_index == b.pred_index && a.pred_lag_us == b.pred_lag_us &&
         a.pred_kind == b.pred_kind && a.wave_offset == b.wave_offset && a.names == b.names &&
         a.steps.size() == b.steps.size() && a.resources.size() == b.resources.size() &&
         a.t0_ns == b.t0_ns && a.rank == b.rank && a.source == b.source;
}

#define EXPECT_MENTIONS(msg, needle) \
  EXPECT_NE(std::string(msg).find(needle), std::string::npos) << "message: " << (msg)

}  // namespace

TEST(GraphFile, RoundTripKeepsEveryArrayAndTheReplay) {
  lumos::testing::TempDir tmp;
  const auto g = demo_graph();
  lumos::graph::write_graph_file(g, tmp.file("demo.lgraph"));
  ASSERT_TRUE(lumos::graph::is_graph_file(tmp.file("demo.lgraph")));
  const auto h = lumos::graph::read_graph_file(tmp.file("demo.lgraph"));
  EXPECT_EQ(h.kind, g.kind);
  EXPECT_EQ(h.pred_offset, g.pred_offset);
  EXPECT_EQ(h.pred_index, g.pred_index);
  EXPECT_EQ(h.pred_lag_us, g.pred_lag_us);
  EXPECT_EQ(h.wave_offset, g.wave_offset);
  EXPECT_EQ(h.names, g.names);
  ASSERT_EQ(h.steps.size(), g.steps.size());
  EXPECT_EQ(h.steps[1].measured_us, g.steps[1].measured_us);
  EXPECT_EQ(lumos::replay::reference_replay(h).finish_us,
            lumos::replay::reference_replay(g).finish_us);
}

TEST(GraphFile, RejectsWrongMagicNewerVersionTruncationAndBrokenOrder) {
  lumos::testing::TempDir tmp;
  lumos::graph::write_graph_file(demo_graph(), tmp.file("g.lgraph"));
  const std::string good = slurp(tmp.file("g.lgraph"));
  auto expect_error = [&](const std::string& bytes, const std::string& needle) {
    const std::string p = tmp.write("bad.lgraph", bytes);
    try {
      lumos::graph::read_graph_file(p);
      ADD_FAILURE() << "accepted a bad file; expected: " << needle;
    } catch (const lumos::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("NOTAGRAPH-------", "bad magic");
  std::string v3 = good;
  v3[8] = 3;
  expect_error(v3, "version 3 is not supported");
  expect_error(good.substr(0, good.size() / 2), "corrupt graph file");
  // Point the first real edge at a later node: no longer topologically ordered.
  auto g = demo_graph();
  g.pred_index[0] = g.num_nodes() - 1;
  lumos::graph::write_graph_file(g, tmp.file("cyc.lgraph"));
  expect_error(slurp(tmp.file("cyc.lgraph")), "topological order");
}

TEST(GraphFile, OldVersionSaysToReingest) {
  std::string bytes = file_bytes_of(demo_graph());
  bytes[8] = 1;
  const std::string e = read_error(bytes);
  EXPECT_MENTIONS(e, "bad.lgraph: graph file version 1 was written by an older lumos");
  EXPECT_MENTIONS(e, "re-run `lumos ingest`");
}

TEST(GraphFile, ChangedByteFailsTheChecksum) {
  // A hostile graph file: 64 changed bytes loaded with silently different results.
  const std::string good = file_bytes_of(demo_graph());
  std::string bytes = good;
  for (size_t i = 0; i < 64; ++i) bytes[good.size() / 2 + i] ^= 0x10;
  EXPECT_MENTIONS(read_error(bytes), "bad.lgraph: corrupt graph file: checksum mismatch");
  bytes = good;
  bytes[good.size() - 100] ^= 1;  // a single bit in a duration, still a valid graph
  EXPECT_MENTIONS(read_error(bytes), "checksum mismatch");
}

TEST(GraphFile, TruncatedOrExtendedFileNamesTheLength) {
  const std::string good = file_bytes_of(demo_graph());
  EXPECT_MENTIONS(read_error(good.substr(0, good.size() - 1)), "truncated or appended to");
  EXPECT_MENTIONS(read_error(good + "x"), "truncated or appended to");
  EXPECT_MENTIONS(read_error(good.substr(0, 20)), "header: truncated (20 bytes)");
}

TEST(GraphFile, OffsetOutOfRangeIsRejectedBeforeUse) {
  // A hostile graph file: one changed offset crashed the validator (heap-buffer-overflow).
  auto g = demo_graph();
  g.pred_offset[3] = 1u << 30;
  EXPECT_MENTIONS(resealed_error(g), "invalid graph: edges: pred_offset[");
  g = demo_graph();
  g.wave_offset[1] = g.num_nodes() + 1000;  // past the end, with the last offset still right
  EXPECT_MENTIONS(resealed_error(g), "invalid graph: waves: wave_offset[");
  g = demo_graph();
  g.pred_offset.back() += 1;
  EXPECT_MENTIONS(resealed_error(g), "does not equal the");
  g = demo_graph();
  g.pred_index[5] = 1u << 31;
  EXPECT_MENTIONS(resealed_error(g), "breaks the topological order");
}

TEST(GraphFile, IndicesEnumsAndTimesAreChecked) {
  auto expect = [](void (*edit)(lumos::graph::Graph&), const std::string& needle) {
    auto g = demo_graph();
    edit(g);
    EXPECT_MENTIONS(resealed_error(g), needle);
  };
  expect([](lumos::graph::Graph& g) { g.name[4] = static_cast<uint32_t>(g.names.size()); },
         "names name");
  expect(
      [](lumos::graph::Graph& g) { g.resource[4] = static_cast<uint32_t>(g.resources.size()) + 7; },
      "names resource");
  expect([](lumos::graph::Graph& g) { g.step[4] = -5; }, "names step -5");
  expect([](lumos::graph::Graph& g) { g.kind[4] = static_cast<lumos::graph::NodeKind>(200); },
         "unknown kind 200");
  expect([](lumos::graph::Graph& g) { g.cls[4] = static_cast<lumos::graph::NodeClass>(9); },
         "unknown class 9");
  expect([](lumos::graph::Graph& g) { g.pred_kind[2] = static_cast<lumos::graph::EdgeKind>(8); },
         "edge 2 has an unknown kind 8");
  expect([](lumos::graph::Graph& g) { g.dur_us[4] = -1; }, "not a finite non-negative time");
  expect([](lumos::graph::Graph& g) { g.dur_us[4] = std::numeric_limits<double>::infinity(); },
         "not a finite non-negative time");
  expect([](lumos::graph::Graph& g) { g.dur_us[4] = 1e300; }, "not a finite non-negative time");
  expect([](lumos::graph::Graph& g) { g.pred_lag_us[3] = std::nan(""); },
         "lag that is not a finite time");
  expect([](lumos::graph::Graph& g) { g.steps[0].marker = 1u << 30; },
         "steps: step 0 names a missing marker");
  expect([](lumos::graph::Graph& g) { g.steps[0].measured_us = -3; },
         "steps: step 0 has a measured time");
  expect(
      [](lumos::graph::Graph& g) {
        g.resources[0].kind = static_cast<lumos::graph::ResourceKind>(2);
      },
      "section 'resources': resource 0: unknown kind 2");
}

TEST(GraphFile, EmptyArraysAreRejectedWithoutUndefinedBehaviour) {
  // A hostile graph file: memcpy from a null pointer into an empty vector (UBSan).
  auto g = demo_graph();
  g.event.clear();
  g.names.clear();
  EXPECT_MENTIONS(resealed_error(g), "per-node arrays differ in length");
  lumos::graph::Graph empty;
  EXPECT_MENTIONS(resealed_error(empty), "nodes: no nodes");
}

TEST(GraphFile, CountsLargerThanTheFileAreRejectedBeforeAllocating) {
  // A names count of 2^60 in a file of a few kilobytes.
  const auto g = demo_graph();
  std::string bytes = file_bytes_of(g);
  // The names section (tag 6) begins with its count.
  size_t at = 24;
  for (;;) {
    ASSERT_LT(at + 12, bytes.size());
    uint32_t tag;
    uint64_t len;
    std::memcpy(&tag, bytes.data() + at, 4);
    std::memcpy(&len, bytes.data() + at + 4, 8);
    if (tag == 6) break;
    at += 12 + len;
  }
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(bytes.data() + at + 12, &huge, 8);
  lumos::graph::reseal_graph_bytes(&bytes);
  EXPECT_MENTIONS(read_error(bytes), "section 'names': name count: 1152921504606846976 records");
}

TEST(GraphFile, EveryMutantLoadsIdenticallyOrIsRejected) {
  // Hostile graph files: every single-byte change, and random multi-byte ones, of a real graph
  // file. As written (checksum kept) each must be rejected; resealed (checksum recomputed, as a
  // deliberate edit would) each must be rejected or load as a graph that validates and replays.
  // Nothing may crash; the sanitizer build checks memory and undefined behaviour.
  const auto g = demo_graph();
  const std::string good = file_bytes_of(g);
  ASSERT_TRUE(same_graph(lumos::graph::read_graph_bytes(good, "good"), g));
  size_t rejected = 0, loaded = 0;
  auto check = [&](std::string bytes) {
    if (bytes == good) return;
    EXPECT_NE(read_error(bytes), "") << "a changed file loaded without its checksum failing";
    lumos::graph::reseal_graph_bytes(&bytes);
    try {
      const auto h = lumos::graph::read_graph_bytes(bytes, "mutant");
      lumos::replay::reference_replay(h);
      ++loaded;
    } catch (const lumos::InputError&) {
      ++rejected;
    }
  };
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bytes = good;
    bytes[i] = static_cast<char>(bytes[i] ^ 0x5A);
    check(bytes);
  }
  std::mt19937_64 rng(11);
  for (int m = 0; m < 400; ++m) {
    std::string bytes = good;
    const int changes = 2 + static_cast<int>(rng() % 64);
    for (int c = 0; c < changes; ++c) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    check(bytes);
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(loaded, 0u);  // some edits (a duration, a name) still make a valid graph
}

TEST(GraphFile, FuzzCorpusNeverCrashesTheReader) {
  namespace fs = std::filesystem;
  const fs::path corpus = fs::path(LUMOS_FUZZ_CORPUS).parent_path() / "graph_file_corpus";
  int files = 0;
  for (const auto& e : fs::directory_iterator(corpus)) {
    const std::string bytes = slurp(e.path().string());
    lumos::fuzz::graph_file_case(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++files;
  }
  EXPECT_GT(files, 0) << "graph file fuzz corpus is empty: " << corpus;
}

TEST(GraphFile, DamagedFileIsOneLineAndExitOneFromTheCommand) {
  lumos::testing::TempDir tmp;
  auto g = demo_graph();
  g.wave_offset[1] = g.num_nodes() + 1000;
  std::string bytes = file_bytes_of(g);
  lumos::graph::reseal_graph_bytes(&bytes);
  const std::string bad = tmp.write("bad.lgraph", bytes);
  auto r = lumos::testing::run_lumos("replay " + bad);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_MENTIONS(r.out, bad + ": invalid graph: waves: wave_offset[");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  bytes[bytes.size() / 2] ^= 1;
  tmp.write("bad.lgraph", bytes);
  r = lumos::testing::run_lumos("replay " + bad);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_MENTIONS(r.out, bad + ": corrupt graph file: checksum mismatch");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(GraphFile, DirectoryIsNotReadAsAGraph) {
  lumos::testing::TempDir tmp;
  try {
    lumos::graph::read_graph_file(tmp.path());
    ADD_FAILURE() << "read a directory as a graph";
  } catch (const lumos::InputError& e) {
    EXPECT_MENTIONS(e.what(), tmp.path() + " is a folder");
  }
}
