#include "common/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos {
namespace {

// What a non-regular file is, for the message.
std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a named pipe (FIFO)";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

}  // namespace

void check_output_path(const std::string& path) {
  LUMOS_EXPECT(!path.empty(), "output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    LUMOS_EXPECT(S_ISREG(st.st_mode),
                 path + ": " + kind_of(st.st_mode) + "; outputs go only to regular files");
    // The rename would replace a file nobody may write (even as root, where access(2) says
    // yes): a file made read-only is one its owner meant to keep.
    LUMOS_EXPECT((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0,
                 path + ": a read-only file (" + strprintf("mode %04o", st.st_mode & 07777) +
                     "); outputs do not replace it (make it writable to allow that)");
    return;
  }
  // A new file: its folder must exist (a dangling link lands here too and is refused below).
  struct stat lst {};
  LUMOS_EXPECT(::lstat(path.c_str(), &lst) != 0,
               path + ": a link to a missing file; outputs go only to regular files");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  struct stat pst {};
  LUMOS_EXPECT(::stat(dir.c_str(), &pst) == 0 && S_ISDIR(pst.st_mode),
               path + ": the folder " + dir + " does not exist");
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  LUMOS_EXPECT(!is_stdout(path), "-: this output cannot go to standard output; give a file name");
  check_output_path(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    LUMOS_EXPECT(out.good(), path + ": cannot create output file (" + std::strerror(errno) + ")");
    // The stream keeps no reason; the failed write(2) left it in errno (ENOSPC, EDQUOT, EIO).
    auto failed = [&] {
      return path + ": write failed" +
             (errno != 0 ? " (" + std::string(std::strerror(errno)) + ")" : "");
    };
    try {
      errno = 0;
      write(out);
      out.flush();
      LUMOS_EXPECT(out.good(), failed());
      out.close();  // closing flushes what is left: its failure loses data too
      LUMOS_EXPECT(!out.fail(), failed());
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw InputError(path + ": cannot rename temporary output into place (" + std::strerror(err) +
                     ")");
  }
}

void write_output(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (!is_stdout(path)) return write_file_atomically(path, write);
  write(std::cout);
  std::cout.flush();
  LUMOS_EXPECT(!std::cout.fail() && std::fflush(stdout) == 0,
               "standard output: write failed (" + std::string(std::strerror(errno)) + ")");
}

}  // namespace lumos
