// Writes an output file through a temporary beside it and renames it into place, so that a
// failure part-way never leaves half a file under the requested name. Outputs go only to regular
// files: a device, FIFO, socket or folder under the requested name is refused, never replaced
// (a rename over /dev/null would replace the device node when run as root).
#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace lumos {

// Throws InputError (one line, naming what the path is) unless path is an existing regular file
// or a new name in an existing folder; symbolic links are judged by what they point to. Commands
// call it before long work, so that a bad output path fails before minutes are spent.
void check_output_path(const std::string& path);

// Calls write(stream) on a temporary file, then renames it to path. Throws InputError when the
// path is not a regular file (check_output_path), when the file cannot be created or written;
// removes the temporary if anything fails. "-" is refused (for binary outputs and the like).
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// As write_file_atomically, but "-" writes to standard output (for text outputs).
void write_output(const std::string& path, const std::function<void(std::ostream&)>& write);

// Whether path names standard output ("-").
inline bool is_stdout(const std::string& path) {
  return path == "-";
}

}  // namespace lumos
