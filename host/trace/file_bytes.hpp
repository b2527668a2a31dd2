// Reads a trace file into memory, inflating gzip when the file starts with the gzip magic.
// The buffer keeps simdjson's required padding after the data.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace lumos::trace {

struct FileBytes {
  std::vector<char> data;  // size() = content + padding
  size_t size = 0;         // content bytes (uncompressed)
  bool was_gzip = false;
};

// Throws InputError naming the file on a missing file or a truncated or corrupt gzip stream.
FileBytes read_file_bytes(const std::string& path, size_t padding);

// Inflates an in-memory gzip stream (one or more members). `what` names the source in messages.
FileBytes gunzip_bytes(const char* data, size_t size, size_t padding, const std::string& what);

bool looks_gzip(const char* data, size_t size);

}  // namespace lumos::trace
