#include "trace/file_bytes.hpp"

#include <libdeflate.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>

#include "common/error.hpp"

namespace lumos::trace {

bool looks_gzip(const char* data, size_t size) {
  return size >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

FileBytes gunzip_bytes(const char* data, size_t size, size_t padding, const std::string& what) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  LUMOS_EXPECT(d != nullptr, what + ": out of memory creating the gzip decompressor");
  FileBytes out;
  out.was_gzip = true;
  size_t in_pos = 0;
  // Each member's trailer holds its size mod 2^32: a hint, grown when the member is larger.
  while (in_pos < size) {
    LUMOS_EXPECT(size - in_pos >= 18, what + ": truncated gzip stream at byte " +
                                          std::to_string(in_pos) +
                                          " (member shorter than a header)");
    uint32_t isize = 0;
    std::memcpy(&isize, data + size - 4, 4);  // last member's ISIZE: a hint only
    size_t cap = std::max<size_t>(isize, (size - in_pos) * 4) + 1024;
    for (;;) {
      out.data.resize(out.size + cap + padding);
      size_t in_used = 0, out_used = 0;
      libdeflate_result r =
          libdeflate_gzip_decompress_ex(d.get(), data + in_pos, size - in_pos,
                                        out.data.data() + out.size, cap, &in_used, &out_used);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
        cap *= 2;
        continue;
      }
      LUMOS_EXPECT(r == LIBDEFLATE_SUCCESS,
                   what + ": truncated or corrupt gzip stream (member starting at byte " +
                       std::to_string(in_pos) + ")");
      in_pos += in_used;
      out.size += out_used;
      break;
    }
  }
  out.data.resize(out.size + padding);
  std::memset(out.data.data() + out.size, 0, padding);
  return out;
}

FileBytes read_file_bytes(const std::string& path, size_t padding) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  LUMOS_EXPECT(in.good(), path + ": cannot open file");
  const std::streamoff n = in.tellg();
  LUMOS_EXPECT(n >= 0, path + ": cannot read file");
  std::vector<char> raw(static_cast<size_t>(n) + padding);
  in.seekg(0);
  in.read(raw.data(), n);
  LUMOS_EXPECT(in.gcount() == n, path + ": short read");
  if (looks_gzip(raw.data(), static_cast<size_t>(n))) {
    return gunzip_bytes(raw.data(), static_cast<size_t>(n), padding, path);
  }
  FileBytes out;
  out.size = static_cast<size_t>(n);
  std::memset(raw.data() + n, 0, padding);
  out.data = std::move(raw);
  return out;
}

}  // namespace lumos::trace
