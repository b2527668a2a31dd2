#include "cost/dtype.hpp"

#include "common/error.hpp"

namespace lumos::cost {

const char* to_string(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
      return "fp32";
    case Dtype::kTf32:
      return "tf32";
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
  }
  return "?";
}

Dtype parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "float" || s == "f32" || s == "Float") return Dtype::kFp32;
  if (s == "tf32") return Dtype::kTf32;
  if (s == "bf16" || s == "bfloat16" || s == "BFloat16") return Dtype::kBf16;
  if (s == "fp16" || s == "half" || s == "f16" || s == "Half") return Dtype::kFp16;
  if (s == "fp8" || s == "e4m3" || s == "e5m2" || s == "f8e4m3" || s == "f8e5m2")
    return Dtype::kFp8;
  throw InputError("unknown dtype '" + std::string(s) +
                   "' (expected fp32, tf32, bf16, fp16 or fp8)");
}

Dtype parse_training_dtype(std::string_view s, const std::string& what) {
  LUMOS_EXPECT(s == "bf16" || s == "fp16" || s == "fp8",
               what + " " + std::string(s) + ": expected bf16, fp16 or fp8");
  return parse_dtype(s);
}

int bytes_of(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
    case Dtype::kTf32:
      return 4;
    case Dtype::kBf16:
    case Dtype::kFp16:
      return 2;
    case Dtype::kFp8:
      return 1;
  }
  return 4;
}

int tensor_elem_bytes(std::string_view t) {
  auto has = [&](const char* part) { return t.find(part) != std::string_view::npos; };
  if (has("BFloat16") || has("Half") || has("half") || has("f16") || has("float16")) return 2;
  if (has("double") || has("Double") || has("long") || has("Long") || has("f64") || has("int64"))
    return 8;
  if (has("Float8") || has("char") || has("Byte") || has("fp8") || has("f8") || has("int8") ||
      has("uint8"))
    return 1;
  return 4;
}

}  // namespace lumos::cost
