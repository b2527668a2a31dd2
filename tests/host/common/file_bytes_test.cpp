// Reading inputs: only regular files, within the byte limit, and gzip inflated into a buffer
// sized by what the data actually inflates to, never by its (forgeable) size trailer.
#include "common/file_bytes.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "common/error.hpp"
#include "support/test_util.hpp"

using lumos::InputError;
using lumos::common::ByteBuffer;
using lumos::common::FileBytes;
using lumos::common::gunzip_bytes;
using lumos::common::read_file_bytes;
using lumos::testing::TempDir;

namespace {

using lumos::testing::gzip_string;

constexpr size_t kPad = 64;
constexpr size_t kMiB = size_t{1} << 20;

// JSON-like text that compresses about as well as a trace does (not a run of one byte).
std::string trace_like(size_t bytes) {
  std::string s;
  for (uint64_t i = 0; s.size() < bytes; ++i)
    s += R"({"ph":"X","cat":"kernel","name":"k)" + std::to_string(i * 2654435761u % 9973) +
         R"(","ts":)" + std::to_string(1000 + i * 7) + "},";
  s.resize(bytes);
  return s;
}

// The InputError message of inflating `gz` with the limit, with the largest buffer it took.
std::string inflate_error(const std::string& gz, uint64_t max_bytes, size_t* peak) {
  ByteBuffer::reset_thread_peak();
  std::string msg;
  try {
    gunzip_bytes(gz.data(), gz.size(), kPad, "t.json.gz", max_bytes);
  } catch (const InputError& e) {
    msg = e.what();
  }
  *peak = ByteBuffer::thread_peak_bytes();
  return msg;
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FileBytes, ForgedSizeTrailerDoesNotSizeTheBuffer) {
  std::string gz = gzip_string(R"({"traceEvents":[]})");
  gz.replace(gz.size() - 4, 4, "\xff\xff\xff\xff");  // claims 4 GiB
  size_t peak = 0;
  const std::string msg = inflate_error(gz, uint64_t{1} << 40, &peak);
  EXPECT_NE(msg.find("t.json.gz: truncated or corrupt gzip stream"), std::string::npos) << msg;
  EXPECT_LE(peak, 64 * 1024 + kPad);  // was 4 GiB
}

TEST(FileBytes, TextAfterTheStreamIsNamedWithoutAGuessedBuffer) {
  const std::string json = trace_like(200000);
  const std::string gz = gzip_string(json);
  size_t peak = 0;
  // The last four bytes, "xt!\n", read as a size trailer would claim 170 MB.
  const std::string msg = inflate_error(gz + "trailing text!\n", uint64_t{1} << 40, &peak);
  EXPECT_NE(
      msg.find("data after the gzip stream at byte " + std::to_string(gz.size()) + " is not gzip"),
      std::string::npos)
      << msg;
  EXPECT_LE(peak, 2 * json.size() + kPad);
}

TEST(FileBytes, TruncatedStreamTakesNoMoreThanItInflates) {
  const std::string json = trace_like(1000000);
  const std::string gz = gzip_string(json);
  for (const size_t cut : {gz.size() / 2, gz.size() - 3}) {
    size_t peak = 0;
    const std::string msg = inflate_error(gz.substr(0, cut), uint64_t{1} << 40, &peak);
    EXPECT_NE(msg.find("truncated or corrupt gzip stream"), std::string::npos) << msg;
    EXPECT_LE(peak, 2 * json.size() + kPad) << "cut at " << cut;
  }
}

TEST(FileBytes, BombStopsAtTheLimitNamingTheOption) {
  const std::string gz = gzip_string(std::string(64 * kMiB, ' '));
  size_t peak = 0;
  const std::string msg = inflate_error(gz, 8 * kMiB, &peak);
  EXPECT_EQ(msg,
            "t.json.gz: inflates to more than the 8 MiB limit of --max-trace-bytes (raise it to "
            "read this input)");
  EXPECT_LE(peak, 8 * kMiB + kPad);
}

TEST(FileBytes, InflatedSizeEqualToTheLimitIsAccepted) {
  const std::string json = trace_like(300000);
  const std::string gz_json = gzip_string(json);
  const FileBytes fb = gunzip_bytes(gz_json.data(), gz_json.size(), kPad, "t", json.size());
  ASSERT_EQ(fb.size, json.size());
  EXPECT_EQ(std::string(fb.data.data(), fb.size), json);
  EXPECT_EQ(fb.data.size(), json.size() + kPad);
  EXPECT_EQ(fb.data.data()[fb.size], '\0');
  size_t peak = 0;
  EXPECT_NE(inflate_error(gzip_string(json), json.size() - 1, &peak).find("--max-trace-bytes"),
            std::string::npos);
}

TEST(FileBytes, MultiMemberStreamsAreConcatenated) {
  // The members need the buffer to grow while earlier members' output is kept.
  const std::string a = trace_like(5000), b = trace_like(2000000), c = "tail";
  const std::string gz = gzip_string(a) + gzip_string(b) + gzip_string(c);
  ByteBuffer::reset_thread_peak();
  const FileBytes fb = gunzip_bytes(gz.data(), gz.size(), kPad, "m.json.gz");
  ASSERT_EQ(fb.size, a.size() + b.size() + c.size());
  EXPECT_EQ(std::string(fb.data.data(), fb.size), a + b + c);
  EXPECT_TRUE(fb.was_gzip);
  EXPECT_LE(ByteBuffer::thread_peak_bytes(), 2 * fb.size + kPad);
}

TEST(FileBytes, PlainFileOverTheLimitIsRefusedBeforeItIsRead) {
  TempDir tmp;
  const std::string p = tmp.write("big.json", std::string(2048, ' '));
  EXPECT_EQ(error_of([&] { read_file_bytes(p, kPad, 1024); }),
            p + ": holds 2 KiB, more than the 1 KiB limit of --max-trace-bytes (raise it to read "
                "this input)");
  const FileBytes fb = read_file_bytes(p, kPad, 2048);
  EXPECT_EQ(fb.size, 2048u);
  EXPECT_FALSE(fb.was_gzip);
}

TEST(FileBytes, GzipFileIsInflatedWithinTheLimit) {
  TempDir tmp;
  const std::string json = trace_like(100000);
  const std::string p = tmp.write("t.json.gz", gzip_string(json));
  const FileBytes fb = read_file_bytes(p, kPad, json.size());
  EXPECT_EQ(std::string(fb.data.data(), fb.size), json);
  EXPECT_NE(error_of([&] { read_file_bytes(p, kPad, json.size() / 2); }).find(p + ": inflates to"),
            std::string::npos);
}

TEST(FileBytes, FolderIsRefusedNamingWhatWasExpected) {
  TempDir tmp;
  EXPECT_EQ(error_of([&] { read_file_bytes(tmp.path(), kPad); }),
            tmp.path() + " is a folder; expected a trace file");
}

TEST(FileBytes, NamedPipeIsRefusedWithoutWaitingForAWriter) {
  TempDir tmp;
  const std::string p = tmp.file("pipe");
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_file_bytes(p, kPad); }),
            p + " is a named pipe (FIFO); expected a trace file");
}

TEST(FileBytes, DeviceIsRefused) {
  EXPECT_EQ(error_of([&] { read_file_bytes("/dev/zero", kPad); }),
            "/dev/zero is a character device; expected a trace file");
}

TEST(FileBytes, MissingFileSaysWhy) {
  EXPECT_EQ(error_of([&] { read_file_bytes("/nonexistent/t.json", kPad); }),
            "/nonexistent/t.json: cannot open file (No such file or directory)");
}

TEST(FileBytes, SizesInMessagesUseBinaryUnits) {
  using lumos::common::describe_bytes;
  EXPECT_EQ(describe_bytes(123), "123 bytes");
  EXPECT_EQ(describe_bytes(uint64_t{4} << 30), "4 GiB");
  EXPECT_EQ(describe_bytes(1536 * 1024), "1.5 MiB");
}
