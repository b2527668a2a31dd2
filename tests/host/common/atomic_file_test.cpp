// An output written through a temporary: a write that fails says why (the stream keeps no reason;
// errno does) and leaves neither the file nor its temporary behind.
#include "common/atomic_file.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "common/error.hpp"
#include "support/test_util.hpp"

namespace {

using lumos::testing::TempDir;

TEST(AtomicFile, AFailedWriteNamesItsReasonAndLeavesNothing) {
  TempDir tmp;
  const std::string path = tmp.file("out.csv");
  try {
    lumos::write_file_atomically(path, [](std::ostream& os) {
      os << "a,b\n";
      // What a full disk does to the stream: write(2) fails with ENOSPC, the stream goes bad.
      errno = ENOSPC;
      os.setstate(std::ios::badbit);
    });
    FAIL() << "accepted";
  } catch (const lumos::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": write failed (No space left on device)");
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
  lumos::write_file_atomically(path, [](std::ostream& os) { os << "a,b\n"; });
  EXPECT_EQ(std::filesystem::file_size(path), 4u);
}

// A file made read-only (chmod a-w) is kept, as a shell's redirection keeps it, even for root,
// whom the permission bits do not stop.
TEST(AtomicFile, AReadOnlyFileIsNotReplaced) {
  TempDir tmp;
  const std::string path = tmp.write("keep.csv", "x\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::group_read |
                                         std::filesystem::perms::others_read);
  try {
    lumos::write_file_atomically(path, [](std::ostream& os) { os << "y\n"; });
    FAIL() << "replaced";
  } catch (const lumos::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": a read-only file (mode 0444); outputs do not replace it (make it "
                  "writable to allow that)");
  }
  EXPECT_EQ(std::filesystem::file_size(path), 2u);
}

}  // namespace
