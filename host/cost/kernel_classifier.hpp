// Maps a kernel's name to a kernel class (the name patterns of kernels_db/kernel_classes.json).
// The classification of a whole trace, with the shapes its operators give, is
// trace/classified_kernels.hpp.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/attention_model.hpp"
#include "cost/collective_model.hpp"
#include "cost/gemm_model.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::cost {

// "other" when no pattern matches.
std::string classify_kernel(const KernelsDb& db, std::string_view kernel_name);

}  // namespace lumos::cost
