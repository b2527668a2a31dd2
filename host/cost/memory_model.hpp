// Memory-bound kernels (norms, softmax, elementwise, residual adds, embedding, loss), the
// optimizer step and memcpy: bytes moved over an achieved fraction of bandwidth, plus a floor.
#pragma once
#include <string>

#include "cost/kernels_db.hpp"

namespace lumos::cost {

// kernel_class: one of the classes in kernels_db/membound.json (norm, softmax, loss,
// elementwise, embedding, optimizer, reduce).
double membound_time_us(const KernelsDb& db, const GpuSpec& gpu, const std::string& kernel_class,
                        double bytes);

// A fused optimizer step over `params` local parameters (bytes per parameter from the db).
double optimizer_time_us(const KernelsDb& db, const GpuSpec& gpu, double params);

enum class CopyDirection { kHostToDevice, kDeviceToHost, kDeviceToDevice };
CopyDirection parse_copy_direction(const std::string& s);  // h2d, d2h, d2d
double memcpy_time_us(const KernelsDb& db, const GpuSpec& gpu, double bytes, CopyDirection dir);

}  // namespace lumos::cost
