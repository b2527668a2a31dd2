#include "common/atomic_file.hpp"

#include <unistd.h>
#include <cstdio>
#include <fstream>

#include "common/error.hpp"

namespace lumos {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    LUMOS_EXPECT(out.good(), path + ": cannot create output file");
    try {
      write(out);
      out.flush();
      LUMOS_EXPECT(out.good(), path + ": write failed");
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(path + ": cannot rename temporary output into place");
  }
}

}  // namespace lumos
