// printf-style formatting into a std::string, so that renderers can keep exact column formats
// while writing to any stream.
#pragma once
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

namespace lumos {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string
strprintf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

// The whole of `text` as a finite number, or nothing (empty text, trailing characters, inf, nan).
inline std::optional<double> parse_finite(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace lumos
