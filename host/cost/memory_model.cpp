#include "cost/memory_model.hpp"

#include "common/error.hpp"

namespace lumos::cost {

double membound_time_us(const KernelsDb& db, const GpuSpec& gpu, const std::string& kernel_class,
                        double bytes) {
  auto it = db.membound.fraction.find(kernel_class);
  if (it == db.membound.fraction.end()) {
    std::string known;
    for (const auto& [k, v] : db.membound.fraction) known += (known.empty() ? "" : ", ") + k;
    throw InputError("memory-bound kernel class '" + kernel_class +
                     "' is not in kernels_db/membound.json (known: " + known + ")");
  }
  LUMOS_EXPECT(bytes >= 0, "memory-bound kernel: bytes must be non-negative");
  auto arch = db.membound.arch_fraction.find({gpu.arch, kernel_class});
  const double fraction = arch != db.membound.arch_fraction.end() ? arch->second : it->second;
  return db.membound.floor_us + bytes / (fraction * gpu.hbm_gbps * 1e3);
}

double optimizer_time_us(const KernelsDb& db, const GpuSpec& gpu, double params) {
  return membound_time_us(db, gpu, "optimizer", params * db.membound.optimizer_bytes_per_param);
}

CopyDirection parse_copy_direction(const std::string& s) {
  if (s == "h2d" || s == "HtoD") return CopyDirection::kHostToDevice;
  if (s == "d2h" || s == "DtoH") return CopyDirection::kDeviceToHost;
  if (s == "d2d" || s == "DtoD") return CopyDirection::kDeviceToDevice;
  throw InputError("copy direction '" + s + "': expected h2d, d2h or d2d");
}

double memcpy_time_us(const KernelsDb& db, const GpuSpec& gpu, double bytes, CopyDirection dir) {
  const double gbps = dir == CopyDirection::kHostToDevice   ? gpu.pcie_h2d_gbps
                      : dir == CopyDirection::kDeviceToHost ? gpu.pcie_d2h_gbps
                                                            : gpu.d2d_gbps;
  return db.membound.floor_us + bytes / (gbps * 1e3);
}

}  // namespace lumos::cost
