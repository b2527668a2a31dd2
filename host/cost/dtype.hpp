// Numeric formats of GEMMs and attention, with their sizes.
#pragma once
#include <string>
#include <string_view>

namespace lumos::cost {

enum class Dtype : int { kFp32 = 0, kTf32, kBf16, kFp16, kFp8 };
constexpr int kNumDtypes = 5;

const char* to_string(Dtype d);
// Accepts fp32/float, tf32, bf16/bfloat16, fp16/half/f16, fp8/e4m3/e5m2; throws InputError.
Dtype parse_dtype(std::string_view s);
// A training run's GEMM precision as an option gives it (`what`: "--dtype"): bf16, fp16 or fp8.
Dtype parse_training_dtype(std::string_view s, const std::string& what);
// Bytes per element in memory (tf32 is stored as fp32).
int bytes_of(Dtype d);
// Bytes per element of a dtype as traces spell it: PyTorch's "c10::BFloat16", "float", "Half",
// "long int", NCCL args' "Float", and the short names (bf16, f32, fp8) `lumos generate` writes.
// Unknown spellings count 4 bytes.
int tensor_elem_bytes(std::string_view t);

}  // namespace lumos::cost
