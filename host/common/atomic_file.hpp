// Writes an output file through a temporary beside it and renames it into place, so that a
// failure part-way never leaves half a file under the requested name.
#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace lumos {

// Calls write(stream) on a temporary file, then renames it to path. Throws InputError when the
// file cannot be created; removes the temporary if write throws.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace lumos
